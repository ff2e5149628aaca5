#include "scheduler/scheduler_trace.h"

#include <cstdio>
#include <istream>
#include <ostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace farm {

namespace {

// Exact text for a double: a replayed time must be bit-identical to the recorded one.
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string block_text(const Block& b) {
  std::ostringstream o;
  o << b.frame << ' ' << b.x << ' ' << b.y << ' ' << b.width << ' ' << b.height;
  return o.str();
}

std::string assignments_text(const std::vector<Assignment>& as) {
  std::ostringstream o;
  o << as.size();
  for (const Assignment& a : as)
    o << " [" << a.attempt << ' ' << a.block_id << ' ' << block_text(a.block) << ' ' << a.is_copy << ']';
  return o.str();
}

std::string reply_text(const ResultReply& r) {
  std::ostringstream o;
  o << (r.outcome == ResultOutcome::accepted ? "accepted " : "late ") << r.block_id << ' ' << block_text(r.block);
  for (const Cancel& c : r.cancels) o << " [" << c.worker << ' ' << c.attempt << ']';
  return o.str();
}

std::string ids_text(const std::vector<WorkerId>& ids) {
  std::ostringstream o;
  o << ids.size();
  for (WorkerId id : ids) o << ' ' << id;
  return o.str();
}

std::string decisions_since(const Scheduler& s, size_t& written) {
  std::ostringstream o;
  const auto& d = s.decisions();
  for (; written < d.size(); ++written)
    o << " [" << num(d[written].time) << ' ' << d[written].worker << ' ' << d[written].from_size << ' '
      << d[written].to_size << ']';
  return o.str();
}

std::string config_text(const SchedulerConfig& c) {
  std::ostringstream o;
  o << "config " << c.width << ' ' << c.height << ' ' << c.block_size << ' ' << c.min_block << ' ' << num(c.base_wait)
    << ' ' << c.max_copies << ' ' << static_cast<int>(c.policy) << ' ' << num(c.heartbeat_interval) << ' '
    << c.liveness << ' ' << num(c.result_bytes_per_pixel) << ' ' << c.frames.size();
  for (int f : c.frames) o << ' ' << f;
  if (c.grid != 1) o << " grid " << c.grid;
  // The costs follow as "K" lines (RecordedCosts); a trace without them cannot be replayed.
  if (c.block_cost) o << " block-cost";
  return o.str();
}

bool parse_config(std::istringstream& in, SchedulerConfig& c) {
  int policy = 0;
  size_t frames = 0;
  in >> c.width >> c.height >> c.block_size >> c.min_block >> c.base_wait >> c.max_copies >> policy >>
      c.heartbeat_interval >> c.liveness >> c.result_bytes_per_pixel >> frames;
  if (!in || policy < 0 || policy >= static_cast<int>(std::size(k_all_policies)) || frames == 0 || frames > 1'000'000)
    return false;
  c.policy = static_cast<PolicyKind>(policy);
  c.frames.resize(frames);
  for (int& f : c.frames) in >> f;
  if (!in) return false;
  const auto before = in.tellg();
  std::string word;
  if (in >> word && word == "grid") {
    in >> c.grid;
    return static_cast<bool>(in) && c.grid >= 1 && c.grid <= k_max_block_side;
  }
  in.clear();
  in.seekg(before);
  return true;
}

}  // namespace

std::shared_ptr<RecordedCosts> RecordedCosts::wrap(SchedulerConfig& config) {
  if (!config.block_cost) return nullptr;
  auto recorded = std::make_shared<RecordedCosts>();
  recorded->m_model = std::move(config.block_cost);
  config.block_cost = [r = recorded.get()](const Block& b) { return r->cost(b); };
  return recorded;
}

double RecordedCosts::cost(const Block& b) {
  const Key key{b.frame, b.x, b.y, b.width, b.height};
  if (auto it = m_known.find(key); it != m_known.end()) return it->second;
  const double c = m_model(b);
  m_known.emplace(key, c);
  m_unwritten.emplace_back(b, c);
  return c;
}

std::string RecordedCosts::take_lines() {
  std::string out;
  for (const auto& [b, c] : m_unwritten) out += "K " + block_text(b) + ' ' + num(c) + '\n';
  m_unwritten.clear();
  return out;
}

SchedulerTrace::SchedulerTrace(Scheduler& scheduler, std::ostream& trace, std::shared_ptr<RecordedCosts> costs)
    : m_scheduler(scheduler), m_trace(trace), m_costs(std::move(costs)),
      m_decisions_written(scheduler.decisions().size()) {
  m_trace << config_text(scheduler.config()) << '\n';
  if (m_costs) m_trace << m_costs->take_lines();
  m_scheduler.set_observer(this);
}

SchedulerTrace::~SchedulerTrace() { m_scheduler.set_observer(nullptr); }

void SchedulerTrace::write(const std::string& inputs, const std::string& outputs) {
  if (m_costs) m_trace << m_costs->take_lines();  // asked for during this call: replay needs them first
  m_trace << inputs << " : " << outputs << " ;" << decisions_since(m_scheduler, m_decisions_written) << '\n';
}

void SchedulerTrace::restored(const std::vector<Block>& completed, AttemptId next_attempt) {
  std::string inputs = "C " + std::to_string(next_attempt) + ' ' + std::to_string(completed.size());
  for (const Block& b : completed) inputs += ' ' + block_text(b);
  write(inputs, "");
}

void SchedulerTrace::joined(WorkerId worker, Seconds now, int threads, int members) {
  // A relay's site size is a fourth number; a worker's line is as before.
  write("J " + num(now) + ' ' + std::to_string(worker) + ' ' + std::to_string(threads) +
            (members > 0 ? ' ' + std::to_string(members) : std::string()),
        "");
}

void SchedulerTrace::left(WorkerId worker, Seconds now) { write("L " + num(now) + ' ' + std::to_string(worker), ""); }

void SchedulerTrace::heard(WorkerId worker, Seconds now) { write("H " + num(now) + ' ' + std::to_string(worker), ""); }

void SchedulerTrace::network(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead) {
  write("N " + std::to_string(worker) + ' ' + num(rtt) + ' ' + num(bytes_per_second) + ' ' + num(lease_overhead), "");
}

void SchedulerTrace::requested(WorkerId worker, Seconds now, int credits, const std::vector<Assignment>& out) {
  write("R " + num(now) + ' ' + std::to_string(worker) + ' ' + std::to_string(credits), assignments_text(out));
}

void SchedulerTrace::released(WorkerId worker, AttemptId attempt) {
  write("X " + std::to_string(worker) + ' ' + std::to_string(attempt), "");
}

void SchedulerTrace::resulted(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds,
                              const ResultReply& reply) {
  // The render time only when known: traces recorded before it was an input still replay.
  write("S " + num(now) + ' ' + std::to_string(worker) + ' ' + std::to_string(attempt) +
            (render_seconds >= 0 ? ' ' + num(render_seconds) : std::string()),
        reply_text(reply));
}

void SchedulerTrace::ticked(Seconds now, const std::vector<WorkerId>& dead) { write("T " + num(now), ids_text(dead)); }

Status replay_trace(std::istream& trace) {
  std::string line;
  if (!std::getline(trace, line)) return Status::error("empty trace");
  std::istringstream head(line);
  std::string word;
  head >> word;
  SchedulerConfig config;
  if (word != "config" || !parse_config(head, config)) return Status::error("line 1: not a scheduler trace header");
  std::string extra;
  // A run with a cost model: its answers come as "K" lines, each before the first call that
  // asked for it (the first ones before any call: the constructor's); replay answers from them.
  std::map<std::tuple<int, int, int, int, int>, double> costs;
  if (head >> extra && extra == "block-cost") {
    config.block_cost = [&costs](const Block& b) {
      auto it = costs.find({b.frame, b.x, b.y, b.width, b.height});
      if (it == costs.end()) throw std::out_of_range("the trace holds no cost for block " + block_text(b));
      return it->second;
    };
  }
  std::unique_ptr<Scheduler> made;
  size_t decisions = 0;
  for (int n = 2; std::getline(trace, line); ++n) {
    if (line.rfind("K ", 0) == 0) {
      std::istringstream in(line.substr(2));
      Block b;
      double c = 0;
      in >> b.frame >> b.x >> b.y >> b.width >> b.height >> c;
      if (!in || !config.block_cost) return Status::error("line " + std::to_string(n) + ": a bad block cost line");
      costs[{b.frame, b.x, b.y, b.width, b.height}] = c;
      continue;
    }
    if (!made) {
      try {
        made = std::make_unique<Scheduler>(config);
      } catch (const std::exception& e) {
        return Status::error(std::string("line 1: ") + e.what());
      }
    }
    Scheduler& s = *made;
    const size_t colon = line.find(" : ");
    if (colon == std::string::npos) return Status::error("line " + std::to_string(n) + ": no ' : ' separator");
    std::istringstream in(line.substr(0, colon));
    char op = 0;
    in >> op;
    double t = 0, x = 0, y = 0;
    WorkerId id = 0;
    long long k = 0;
    AttemptId attempt = 0;
    std::string got;
    try {
    switch (op) {
      case 'C': {
        in >> attempt >> k;
        std::vector<Block> done;
        for (long long i = 0; in && i < k && i < 100000000; ++i) {
          Block b;
          in >> b.frame >> b.x >> b.y >> b.width >> b.height;
          done.push_back(b);
        }
        try {
          if (in) s.restore(done, attempt);
        } catch (const std::exception& e) {
          return Status::error("line " + std::to_string(n) + ": " + e.what());
        }
        break;
      }
      case 'J': {
        in >> t >> id >> k;
        int members = 0;
        if (in && !(in >> members)) {
          members = 0;
          in.clear();
        }
        s.worker_joined(id, t, static_cast<int>(k), members);
        break;
      }
      case 'L': in >> t >> id; s.worker_left(id, t); break;
      case 'H': in >> t >> id; s.heard_from(id, t); break;
      case 'N': {
        double overhead = -1;
        in >> id >> x >> y >> overhead;
        s.network_sample(id, x, y, overhead);
        break;
      }
      case 'R': in >> t >> id >> k; got = assignments_text(s.request(id, t, static_cast<int>(k))); break;
      case 'X': in >> id >> attempt; s.release(id, attempt); break;
      case 'S': {
        double render = -1;
        in >> t >> id >> attempt;
        if (in && !(in >> render)) {
          render = -1;
          in.clear();
        }
        got = reply_text(s.result(id, attempt, t, render));
        break;
      }
      case 'T': in >> t; got = ids_text(s.tick(t)); break;
      default: return Status::error("line " + std::to_string(n) + ": unknown operation '" + std::string(1, op) + "'");
    }
    } catch (const std::out_of_range& e) {
      return Status::error("line " + std::to_string(n) + ": " + e.what());
    }
    if (!in) return Status::error("line " + std::to_string(n) + ": cannot read the call's inputs");
    const std::string replayed = got + " ;" + decisions_since(s, decisions);
    const std::string recorded = line.substr(colon + 3);
    if (replayed != recorded)
      return Status::error("line " + std::to_string(n) + ": recorded '" + recorded + "', replay gave '" + replayed + "'");
  }
  if (!made) {  // no call recorded: the header must still make a scheduler
    try {
      Scheduler check(config);
    } catch (const std::exception& e) {
      return Status::error(std::string("line 1: ") + e.what());
    }
  }
  return {};
}

}  // namespace farm
