// FARM_UNDER_ASAN is 1 in a build with AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang
// answers __has_feature), for the few tests that cannot run under it: ASan reserves terabytes of
// address space, and it ends the process on an allocation too large to have instead of throwing
// std::bad_alloc (its operator new reports out of memory whatever allocator_may_return_null says).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define FARM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FARM_UNDER_ASAN 1
#endif
#endif
#ifndef FARM_UNDER_ASAN
#define FARM_UNDER_ASAN 0
#endif
