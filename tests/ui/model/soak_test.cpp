// The soak's generator is reproducible and covers every action; RSS parsing and growth after warm-up.
#include "ui/model/soak.h"

#include <doctest/doctest.h>

#include <set>

using namespace shardscope::ui;

TEST_CASE("soak: the same seed gives the same actions and gaps, another seed others") {
  SoakGenerator a(7);
  SoakGenerator b(7);
  SoakGenerator c(8);
  int differ = 0;
  for (int i = 0; i < 500; ++i) {
    const SoakAction x = a.next();
    CHECK(x == b.next());
    CHECK(a.frames_until_next() == b.frames_until_next());
    if (!(x == c.next())) ++differ;
    (void)c.frames_until_next();
  }
  CHECK(differ > 400);
}

TEST_CASE("soak: every kind of action comes up, with indices inside their lists") {
  SoakGenerator generator(1);
  std::set<int> kinds;
  std::set<std::size_t> cells;
  for (int i = 0; i < 5000; ++i) {
    const SoakAction action = generator.next();
    kinds.insert(static_cast<int>(action.kind));
    CHECK(action.x0 >= 0.0f);
    CHECK(action.x0 <= 1.0f);
    CHECK(action.character >= ' ');
    CHECK(action.character <= '~');
    if (action.kind == SoakActionKind::kRunCell) {
      REQUIRE(action.index < soak_cells().size());
      cells.insert(action.index);
    }
    if (action.kind == SoakActionKind::kApplySpec) {
      CHECK(action.index / 64 < soak_specs().size());
      CHECK(action.index % 64 < soak_names().size());
    }
    if (action.kind == SoakActionKind::kSwitchDevices) CHECK(action.index < soak_presets().size());
    if (action.kind == SoakActionKind::kProgramView) CHECK(action.index < 5);
  }
  CHECK(kinds.size() == static_cast<std::size_t>(kSoakActionKinds));
  CHECK(cells.size() == soak_cells().size());
  CHECK(soak_action_is_input(SoakActionKind::kKey));
  CHECK_FALSE(soak_action_is_input(SoakActionKind::kRunCell));
  CHECK(std::string(soak_action_name(SoakActionKind::kProgramView)) == "program_view");
}

TEST_CASE("soak: the cell list has cells that fail and cells that succeed") {
  int failing = 0;
  for (const SoakCell& cell : soak_cells()) failing += cell.fails ? 1 : 0;
  CHECK(failing >= 4);
  CHECK(failing < static_cast<int>(soak_cells().size()));
}

TEST_CASE("soak: VmRSS is read from /proc/self/status text") {
  CHECK(parse_vm_rss_kb("Name:\tshardscope\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nRssAnon: 1 kB\n") == 123456L);
  CHECK_FALSE(parse_vm_rss_kb("Name:\tx\nVmSize: 5 kB\n").has_value());
  CHECK_FALSE(parse_vm_rss_kb("VmRSS:\tlots\n").has_value());
  const std::optional<long> own = current_rss_kb();
  REQUIRE(own.has_value());
  CHECK(*own > 0);
}

TEST_CASE("soak: growth is the peak after warm-up against the warm-up's last sample") {
  const std::optional<SoakGrowth> growth = soak_growth({50, 90, 100, 104, 112, 108}, 3);
  REQUIRE(growth.has_value());
  CHECK(growth->warmup_kb == 100);
  CHECK(growth->peak_after_warmup_kb == 112);
  CHECK(growth->end_kb == 108);
  CHECK(growth->percent == doctest::Approx(12.0));
  CHECK(soak_growth({100, 100, 95}, 2)->percent == doctest::Approx(-5.0));
  CHECK_FALSE(soak_growth({100, 100}, 2).has_value());
  CHECK_FALSE(soak_growth({100, 100}, 0).has_value());
}
