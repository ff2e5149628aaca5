// A farm service's submissions (service/job_submission.h): the JSON a client sends, read by the
// service as untrusted input. Errors only (std::invalid_argument naming the field); what it
// accepts it writes back and reads again to the same submission.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "service/job_submission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  farm::JobSubmission s;
  try {
    s = farm::parse_submission(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const std::string again = farm::submission_json(s);
  if (farm::submission_json(farm::parse_submission(again)) != again) __builtin_trap();  // a round trip changes nothing
  return 0;
}
