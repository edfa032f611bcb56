// Scene files: malformed JSON of every kind is a ValueError naming the scene.
#include "io/scene.h"

#include <doctest/doctest.h>

#include "base/error.h"

using namespace shardscope;

TEST_CASE("a scene whose JSON holds a number too large for a double is a ValueError") {
  // Found by fuzzing: nlohmann reports it as out_of_range.406, which escaped as a raw internal error.
  CHECK_THROWS_WITH_AS((void)parse_scene(R"({"title": "t", "steps": [], "x": 1e999})", "big.json"),
                       "Scene big.json is not valid JSON: number overflow parsing '1e999'", Error);
  CHECK_THROWS_WITH_AS((void)parse_scene("{", "cut.json"),
                       "Scene cut.json is not valid JSON: parse error at line 1, column 2: syntax error while parsing "
                       "object key - unexpected end of input; expected string literal",
                       Error);
}
