// rich's Jupyter HTML from console text: every text/html output the oracle notebooks recorded, from its text/plain.
#include "viz/ansi_html.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace shardscope;

namespace {

const std::filesystem::path kNotebookDir = std::filesystem::path(SHARDSCOPE_TEST_DATA_DIR) / ".." / "notebooks";

constexpr const char* kPre =
    "<pre style=\"white-space:pre;overflow-x:auto;line-height:normal;font-family:Menlo,'DejaVu Sans Mono',"
    "consolas,'Courier New',monospace\">";

}  // namespace

TEST_CASE("every recorded text/html of the notebook corpus is rich's rendering of its text/plain") {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kNotebookDir)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "manifest.json") continue;
    std::ifstream file(entry.path());
    const nlohmann::json notebook = nlohmann::json::parse(file);
    for (const auto& cell : notebook.at("cells")) {
      for (const auto& output : cell.at("outputs_detail")) {
        if (!output.contains("text_html") || !output.contains("text_plain")) continue;
        INFO(entry.path().filename().string() << " cell " << cell.at("index").get<int>());
        CHECK(ansi_to_jupyter_html(output.at("text_plain").get<std::string>()) ==
              output.at("text_html").get<std::string>());
        ++compared;
      }
    }
  }
  CHECK(compared >= 60);  // the 12 notebooks with rich output
}

TEST_CASE("styles become rich's CSS, markup characters are escaped") {
  CHECK(ansi_to_jupyter_html("a<b>&c") == std::string(kPre) + "a&lt;b&gt;&amp;c</pre>\n");
  CHECK(ansi_to_jupyter_html("\x1b[1;36m0\x1b[0m,\x1b[1;36m1\x1b[0m") ==
        std::string(kPre) +
            "<span style=\"color: #008080; text-decoration-color: #008080; font-weight: bold\">0</span>,"
            "<span style=\"color: #008080; text-decoration-color: #008080; font-weight: bold\">1</span></pre>\n");
  // Neighbouring runs of one style are one span (rich simplifies its segments).
  CHECK(ansi_to_jupyter_html("\x1b[38;2;0;0;0;48;2;57;59;121m  \x1b[0m\x1b[38;2;0;0;0;48;2;57;59;121mTPU 0\x1b[0m") ==
        std::string(kPre) +
            "<span style=\"color: #000000; text-decoration-color: #000000; background-color: #393b79\">  TPU "
            "0</span></pre>\n");
  CHECK(ansi_to_jupyter_html("\x1b[3;4;38;5;196mx\x1b[0m") ==
        std::string(kPre) +
            "<span style=\"color: #ff0000; text-decoration-color: #ff0000; font-style: italic; text-decoration: "
            "underline\">x</span></pre>\n");
}
