#include "master/journal_format.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace farm {

namespace {

constexpr char k_marker[4] = {'f', 'j', 'r', '2'};
constexpr char k_magic[] = "farm-journal-2";
constexpr char k_magic_v1[] = "farm-journal-1";
constexpr size_t k_checksum_bytes = 16;

// Little-endian fields, whatever the host.
template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  uint64_t v;
  static_assert(sizeof(T) <= 8);
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(&v, &value, 8);
  } else {
    v = static_cast<uint64_t>(value);
  }
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <typename T>
T get(const uint8_t*& p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{p[i]} << (8 * i);
  p += sizeof(T);
  if constexpr (std::is_same_v<T, double>) {
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  } else {
    return static_cast<T>(v);
  }
}

struct Record {
  uint32_t number = 0;
  const uint8_t* body = nullptr;
  uint32_t size = 0;
  size_t end = 0;  // offset just past it
};

// The valid record at `offset`, if there is one. Every bound is checked before it is used:
// the length is compared with what is left of the buffer, never added to the offset first.
std::optional<Record> record_at(const uint8_t* data, size_t size, size_t offset) {
  if (offset > size || size - offset < k_journal_record_head) return std::nullopt;
  const uint8_t* p = data + offset;
  if (std::memcmp(p, k_marker, 4) != 0) return std::nullopt;
  const uint8_t* fields = p + 4;
  Record r;
  r.number = get<uint32_t>(fields);
  r.size = get<uint32_t>(fields);
  if (r.size == 0 || r.size > k_journal_max_body || r.size > size - offset - k_journal_record_head) return std::nullopt;
  uint8_t sum[k_checksum_bytes];
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, k_checksum_bytes);
  crypto_generichash_update(&state, p + 4, 8);
  crypto_generichash_update(&state, p + k_journal_record_head, r.size);
  crypto_generichash_final(&state, sum, k_checksum_bytes);
  if (std::memcmp(sum, p + 12, k_checksum_bytes) != 0) return std::nullopt;
  r.body = p + k_journal_record_head;
  r.end = offset + k_journal_record_head + r.size;
  return r;
}

bool parse_block(const Record& r, JournalBlock& j) {
  if (r.size < k_journal_block_head) return false;
  const uint8_t* b = r.body + 1;
  j.epoch = get<uint32_t>(b);
  j.attempt = get<uint64_t>(b);
  j.worker = get<uint32_t>(b);
  j.rect.frame = get<int32_t>(b);
  j.rect.x = get<int32_t>(b);
  j.rect.y = get<int32_t>(b);
  j.rect.width = get<int32_t>(b);
  j.rect.height = get<int32_t>(b);
  j.render_seconds = get<double>(b);
  j.pixels.assign(r.body + k_journal_block_head, r.body + r.size);
  return true;
}

[[noreturn]] void not_a_journal(const uint8_t* data, size_t size, const std::string& name) {
  // Format 1 framed records as [u32 length][16-byte checksum][body]: its header body starts 20 bytes in.
  const size_t v1 = 4 + k_checksum_bytes;
  if (size >= v1 + 1 + sizeof k_magic_v1 - 1 && data[v1] == 'H' &&
      std::memcmp(data + v1 + 1, k_magic_v1, sizeof k_magic_v1 - 1) == 0) {
    throw JournalFormatError(
        "'" + name +
        "' is a journal of format 1 (an older farm); this farm reads format 2: finish that job with the "
        "farm that wrote it, or pass --fresh to discard it");
  }
  throw JournalFormatError("'" + name +
                           "' is not a farm journal (no valid header; its creation may have been interrupted)");
}

}  // namespace

std::vector<uint8_t> journal_record(uint64_t number, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> out(k_marker, k_marker + 4);
  out.reserve(k_journal_record_head + body.size());
  put<uint32_t>(out, static_cast<uint32_t>(number));
  put<uint32_t>(out, static_cast<uint32_t>(body.size()));
  uint8_t sum[k_checksum_bytes];
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, k_checksum_bytes);
  crypto_generichash_update(&state, out.data() + 4, 8);
  crypto_generichash_update(&state, body.data(), body.size());
  crypto_generichash_final(&state, sum, k_checksum_bytes);
  out.insert(out.end(), sum, sum + k_checksum_bytes);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<uint8_t> journal_header_body(const std::string& identity) {
  const std::string text = "H" + std::string(k_magic) + identity;
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<uint8_t> journal_epoch_body(uint32_t epoch) {
  std::vector<uint8_t> body{'E'};
  put<uint32_t>(body, epoch);
  return body;
}

std::vector<uint8_t> journal_block_body(uint32_t epoch, AttemptId attempt, WorkerId worker, const Block& r,
                                        double render_seconds, const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> body;
  body.reserve(k_journal_block_head + pixels.size());
  body.push_back('B');
  put<uint32_t>(body, epoch);
  put<uint64_t>(body, attempt);
  put<uint32_t>(body, worker);
  put<int32_t>(body, r.frame);
  put<int32_t>(body, r.x);
  put<int32_t>(body, r.y);
  put<int32_t>(body, r.width);
  put<int32_t>(body, r.height);
  put<double>(body, render_seconds);
  body.insert(body.end(), pixels.begin(), pixels.end());
  return body;
}

JournalContents parse_journal(const uint8_t* data, size_t size, const std::string& name) {
  JournalContents c;
  std::optional<Record> header = record_at(data, size, 0);
  const size_t magic = sizeof k_magic - 1;
  if (!header || header->number != 0 || header->body[0] != 'H' || header->size < 1 + magic ||
      std::memcmp(header->body + 1, k_magic, magic) != 0) {
    not_a_journal(data, size, name);
  }
  c.identity.assign(reinterpret_cast<const char*>(header->body + 1 + magic), header->size - 1 - magic);
  c.records = 1;
  size_t offset = header->end;
  while (offset < size) {
    std::optional<Record> r = record_at(data, size, offset);
    if (!r || r->number != c.last_number + 1) {
      // Damage, or a record torn by a crash: scan for the next valid record that follows the
      // last good one. None before the end: a torn tail (the normal end of a crashed run).
      size_t next = offset + 1;
      for (; next < size; ++next) {
        if (data[next] != static_cast<uint8_t>(k_marker[0])) continue;
        r = record_at(data, size, next);
        if (r && r->number > c.last_number) break;
      }
      if (next >= size) break;
      c.damage.push_back({c.last_number + 1, offset, next - offset, r->number - c.last_number - 1, 0});
      offset = next;
    }
    const char type = static_cast<char>(r->body[0]);
    JournalBlock block;
    if (type == 'E' && r->size == 5) {
      const uint8_t* b = r->body + 1;
      const uint32_t epoch = get<uint32_t>(b);
      c.epochs = std::max<uint32_t>(c.epochs, epoch == UINT32_MAX ? epoch : epoch + 1);
    } else if (type == 'B' && parse_block(*r, block)) {
      c.epochs = std::max<uint32_t>(c.epochs, block.epoch == UINT32_MAX ? block.epoch : block.epoch + 1);
      c.blocks.push_back(std::move(block));
    } else {
      break;  // a checksummed record we do not know: written by something else, stop here
    }
    c.last_number = r->number;
    ++c.records;
    if (!c.damage.empty()) ++c.damage.back().kept_after;
    offset = r->end;
  }
  c.valid_bytes = offset;
  c.torn_bytes = size - offset;
  return c;
}

std::string journal_damage_report(const JournalContents& c) {
  std::string out;
  for (const JournalDamage& d : c.damage) {
    out += "record " + std::to_string(d.record) + " (byte " + std::to_string(d.offset) + ", " +
           std::to_string(d.bytes) + " byte(s)) is damaged: " + std::to_string(d.lost_records) +
           " record(s) lost there, the " + std::to_string(d.kept_after) + " valid record(s) after it kept\n";
  }
  return out;
}

}  // namespace farm
