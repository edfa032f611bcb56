// Reads the oracle's visualize_sharding cases (tests/data/visualize_cases.json) into core objects.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sharding/sharding.h"
#include "viz/layout.h"

namespace shardscope::testing {

// The whole JSON document, read once.
const nlohmann::json& visualize_cases_document();

// The case's sharding: a NamedSharding over dummy devices with the recorded ids, or a
// SingleDeviceSharding when the case's spec is null.
Sharding case_sharding(const nlohmann::json& test_case, const JaxProfile& profile);

// The case's visualize_sharding keyword arguments, with use_color from its render mode.
VizOptions case_options(const nlohmann::json& test_case);

// The case's spec as Python source, e.g. "P('a', ('b', 'c'), None)".
std::string case_spec_text(const nlohmann::json& test_case);

std::vector<int64_t> flat_device_ids(const nlohmann::json& ids);

}  // namespace shardscope::testing
