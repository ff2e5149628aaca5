// The live status as text: JSON for /api/status (fields in docs/live.md) and the Prometheus
// text exposition format (version 0.0.4) for /metrics.
#pragma once

#include <string>

#include "live/live_status.h"

namespace farm {

std::string live_status_json(const LiveStatus& s);
std::string live_prometheus_text(const LiveStatus& s);

// A Prometheus label value: backslash, double quote and line feed escaped, as the format asks.
std::string prometheus_label_value(const std::string& v);

}  // namespace farm
