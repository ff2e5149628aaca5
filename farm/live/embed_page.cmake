# cmake -DIN=page.html -DOUT=page.inc -P embed_page.cmake: the page as a C++ raw string literal,
# so the binary serves it without reading any file at run time.
file(READ "${IN}" page)
string(FIND "${page}" ")FARMPAGE\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's delimiter )FARMPAGE\"")
endif()
file(WRITE "${OUT}" "R\"FARMPAGE(${page})FARMPAGE\"\n")
