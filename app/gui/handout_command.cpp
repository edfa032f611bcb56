// `shardscope handout LESSON -o lesson.html`: runs a lesson and writes its prose, code, outputs, JAX's coloured
// grids (as a notebook shows them) and an SVG diagram per grid into one self-contained HTML page.
#include <pybind11/embed.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "gui/python_session.h"
#include "io/handout.h"
#include "io/lesson.h"
#include "io/markdown.h"
#include "io/notebook.h"
#include "python/host.h"
#include "viz/ansi_html.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

namespace shardscope::cli {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A grid as a notebook shows it (rich's HTML of the coloured picture), then as a diagram.
void add_grid(const ui::VisualOutput& visual, const JaxProfile& profile, std::vector<HandoutOutput>& outputs) {
  try {
    VizOptions options;
    options.use_color = true;
    options.small_multiples = visual.shape.size() != 1 && visual.shape.size() != 2;
    const VizLayout layout = compute_layout(visual.shape, visual.sharding, options, profile);
    outputs.push_back({HandoutOutput::Kind::kHtml, ansi_to_jupyter_html(render_text(layout))});
    outputs.push_back({HandoutOutput::Kind::kSvg, render_svg(layout)});
  } catch (const Error&) {
    outputs.push_back({HandoutOutput::Kind::kText, visual.text});
  }
}

std::vector<HandoutOutput> outputs_of(const ui::CellRecord& record, const JaxProfile& profile) {
  std::vector<HandoutOutput> outputs;
  for (const ui::OutputSegment& part : record.output) {
    switch (part.kind) {
      case ui::OutputSegment::Kind::kVisual:
        if (part.visual) add_grid(*part.visual, profile, outputs);
        break;
      case ui::OutputSegment::Kind::kError: outputs.push_back({HandoutOutput::Kind::kError, part.text}); break;
      default:
        if (part.text.empty()) break;
        // Consecutive text joins into one block, as a notebook's output area shows it.
        if (!outputs.empty() && outputs.back().kind == HandoutOutput::Kind::kText) {
          outputs.back().content += part.text;
        } else {
          outputs.push_back({HandoutOutput::Kind::kText, part.text});
        }
    }
  }
  return outputs;
}

}  // namespace

int run_handout(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const std::set<std::string> valued = {"--devices", "--jax-version", "--output"};
    std::vector<std::string> spelled = args;  // -o is --output's short name
    for (std::string& arg : spelled) {
      if (arg == "-o") arg = "--output";
    }
    const FileRequest request =
        split_file_argument(spelled, valued, "handout needs a LESSON (.py or .ipynb) and -o FILE.html");
    const std::string text = read_file(request.file);
    const bool percent_script = std::filesystem::path(request.file).extension() != ".ipynb";
    const Notebook notebook = load_notebook(request.file);
    // The lesson's `# shardscope-run:` flags, unless the command line names its own.
    std::vector<std::string> options;
    const LessonRunFlags flags = lesson_run_flags(text);
    const auto has = [&](const char* name) {
      return std::find(request.options.begin(), request.options.end(), name) != request.options.end();
    };
    if (flags.devices && !has("--devices")) options.insert(options.end(), {"--devices", *flags.devices});
    if (flags.jax_version && !has("--jax-version"))
      options.insert(options.end(), {"--jax-version", *flags.jax_version});
    options.insert(options.end(), request.options.begin(), request.options.end());
    const Arguments arguments(options, valued, {});
    const auto output = arguments.value("--output");
    if (!output) throw UsageError{"handout needs -o FILE.html"};
    apply_python_session_options(arguments);

    std::vector<HandoutCell> cells;
    bool failed = false;
    {
      const python::InterpreterScope interpreter;
      python::enter_script(request.file);
      gui::PythonSession session;
      std::vector<std::pair<std::size_t, std::uint64_t>> submitted;  // (cell index, session id)
      for (const NotebookCell& cell : notebook.cells) {
        if (cell.kind == CellKind::kMarkdown) {
          cells.push_back({true, percent_script ? uncomment_markdown(cell.source) : cell.source, {}});
        } else if (cell.kind == CellKind::kCode && !cell.source.starts_with("# shardscope-run:")) {
          cells.push_back({false, cell.source, {}});
          submitted.emplace_back(cells.size() - 1, session.submit(cell.source));
        }
      }
      std::size_t done = 0;
      while (done < submitted.size()) {
        std::vector<ui::CellRecord> finished = session.take_finished();
        if (finished.empty()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          continue;
        }
        const JaxProfile profile = session.snapshot()->profile;
        for (const ui::CellRecord& record : finished) {
          for (const auto& [index, id] : submitted) {
            if (id == record.id) cells[index].outputs = outputs_of(record, profile);
          }
          failed = failed || record.status != ui::CellRecord::Status::kOk;
          ++done;
        }
      }
    }
    const Lesson lesson = make_lesson(notebook, percent_script, text);
    const std::string title = lesson.title.empty() ? std::filesystem::path(request.file).stem().string() : lesson.title;
    std::ofstream file(*output, std::ios::binary);
    file << render_handout(title, cells);
    if (!file) throw std::runtime_error("could not write " + *output);
    out << "handout written to " << *output << (failed ? " (some cells raised; their errors are in it)" : "") << "\n";
    return failed ? 1 : 0;
  });
}

}  // namespace shardscope::cli
