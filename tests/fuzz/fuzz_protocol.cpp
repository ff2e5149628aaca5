// Any bytes a peer can send: decoding must never crash, and must either fail cleanly or give a
// message that survives a re-encode/decode round trip.
#include <cstddef>
#include <cstdint>

#include "protocol/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  farm::proto::Decoded d = farm::proto::decode(data, size);
  if (d.message) {
    std::vector<uint8_t> again = farm::proto::encode(*d.message);
    farm::proto::Decoded twice = farm::proto::decode(again.data(), again.size());
    if (!twice.message) __builtin_trap();  // what we decoded, we must be able to send back
  }
  return 0;
}
