// The window's snapshot of a Jupyter kernel it is attached to, read from the inspection module's JSON (public
// JAX APIs only: jax.devices(), .sharding, devices_indices_map, jax.typeof, compile().as_text()).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "ui/session.h"

namespace shardscope::ui {

// What `_shardscope_inspect.snapshot(globals())` returned, as the Variables, canvas, Devices and Program views
// draw it. Arrays whose sharding cannot be drawn (a GSPMDSharding over an irregular device set) are listed with
// their type and sharding text only. Throws ValueError when the JSON is not an inspection snapshot.
[[nodiscard]] std::shared_ptr<SessionSnapshot> snapshot_from_inspection(const nlohmann::json& inspection,
                                                                        std::uint64_t revision);

}  // namespace shardscope::ui
