// `shardscope explain FILE`: runs a script or notebook, then prices every jit program it ran or lowered:
// equations and collectives with shardings, bytes, FLOPs, estimated times, bounds and reasons (text, md or csv).
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "api/program_log.h"
#include "api/session.h"
#include "base/error.h"
#include "base/python_format.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "cost/explain.h"
#include "cost/explain_compare.h"
#include "cost/timeline_svg.h"
#include "cost/why.h"
#include "device/presets.h"
#include "io/notebook.h"
#include "python/host.h"
#include "ui/model/collective_animation.h"
#include "ui/model/device_view.h"

namespace shardscope::cli {
namespace {

// Runs every cell; the script's own output goes to `script_out` (stderr when the report is a document on stdout).
bool run_script(const Notebook& notebook, std::ostream& script_out, std::ostream& err) {
  bool ok = true;
  for (const NotebookCell* cell : notebook.code_cells()) {
    const python::CellResult result = python::run_cell(cell->source);
    script_out << result.stdout_text;
    if (result.output) script_out << *result.output << "\n";
    err << result.stderr_text;
    if (result.status == python::CellResult::Status::kOk) continue;
    err << result.error;
    ok = false;
    if (result.status != python::CellResult::Status::kError) break;  // interrupted or exited: stop there
  }
  return ok;
}

// `--animation-frame N:STEP FILE.svg`: collective N of the document (counted over all programs, in row order) at
// STEP, drawn as the window's Devices view draws it.
struct AnimationFrameRequest {
  std::size_t collective = 0;
  int step = 0;
  std::string path;
};

std::optional<AnimationFrameRequest> take_animation_frame(std::vector<std::string>& args) {
  std::optional<AnimationFrameRequest> request;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--animation-frame") {
      rest.push_back(args[i]);
      continue;
    }
    if (i + 2 >= args.size()) throw UsageError{"--animation-frame takes N:STEP and a FILE.svg"};
    const std::string& at = args[i + 1];
    long long collective = -1;
    int step = -1;
    char colon = 0;
    std::istringstream stream(at);
    if (!(stream >> collective >> colon >> step) || colon != ':' || collective < 0 || step < 0 || !stream.eof()) {
      throw UsageError{"--animation-frame takes N:STEP (0-based) and a FILE.svg, got '" + at + "'"};
    }
    request = AnimationFrameRequest{static_cast<std::size_t>(collective), step, args[i + 2]};
    i += 2;
  }
  args = std::move(rest);
  return request;
}

// Pulls every `--compare-spec NAME=SPEC` (or `--compare-spec=NAME=SPEC`) out of `options`: the option may repeat.
std::vector<ArgumentSpec> take_compare_specs(std::vector<std::string>& options) {
  std::vector<ArgumentSpec> specs;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < options.size(); ++i) {
    std::string text;
    if (options[i] == "--compare-spec") {
      if (i + 1 >= options.size()) throw UsageError{"--compare-spec needs NAME=SPEC"};
      text = options[++i];
    } else if (options[i].starts_with("--compare-spec=")) {
      text = options[i].substr(std::string("--compare-spec=").size());
    } else {
      rest.push_back(options[i]);
      continue;
    }
    try {
      specs.push_back(parse_argument_spec(text));
    } catch (const Error& e) {
      throw UsageError{e.what()};
    }
  }
  options = std::move(rest);
  return specs;
}

std::string variant_label(const std::optional<std::string>& compare, const std::vector<ArgumentSpec>& specs) {
  std::vector<std::string> parts;
  if (compare) parts.push_back(*compare);
  for (const ArgumentSpec& spec : specs) parts.push_back(spec.argument + "=" + spec.spec.repr(api::session().profile));
  return join(parts, ", ");
}

void write_file(const std::string& path, const std::string& text, const std::string& option) {
  std::ofstream file(path, std::ios::binary);
  if (!file || !(file << text)) throw UsageError{"cannot write " + option + " '" + path + "'"};
}

}  // namespace

int run_explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const std::set<std::string> valued = {"--devices", "--jax-version", "--format",   "--hardware",
                                          "--output",  "--compare",     "--timeline", "--compare-spec"};
    std::vector<std::string> remaining = args;
    const std::optional<AnimationFrameRequest> frame_request = take_animation_frame(remaining);
    FileRequest request = split_file_argument(remaining, valued, "explain needs a FILE (.py or .ipynb)");
    const std::vector<ArgumentSpec> compare_specs = take_compare_specs(request.options);
    const Arguments arguments(request.options, valued, {"--why"});
    apply_python_session_options(arguments);
    const std::string format_text = arguments.value("--format").value_or("text");
    ExplainFormat format = ExplainFormat::kText;
    try {
      format = parse_explain_format(format_text);
    } catch (const Error&) {
      throw UsageError{"--format must be text, md or csv, not '" + format_text + "'"};
    }
    const HardwareSpec* hardware = nullptr;
    if (const auto kind = arguments.value("--hardware")) {
      try {
        hardware = &hardware_for_kind(*kind);
      } catch (const Error&) {
        std::string kinds;
        for (const HardwareSpec& row : hardware_table()) kinds += (kinds.empty() ? "" : ", ") + row.device_kind;
        throw UsageError{"--hardware '" + *kind + "' names no device kind (" + kinds + ")"};
      }
    }
    const std::optional<std::string> output_path = arguments.value("--output");
    const std::optional<std::string> timeline_path = arguments.value("--timeline");
    const std::optional<std::string> compare = arguments.value("--compare");
    std::optional<CompareTarget> target;
    if (compare) {
      try {
        target = compare_target(*compare);
      } catch (const Error& e) {
        throw UsageError{"--compare " + std::string(e.what())};
      }
    }
    const bool comparing = target.has_value() || !compare_specs.empty();
    const bool why = arguments.flag("--why");
    if (why && (comparing || format == ExplainFormat::kCsv)) {
      throw UsageError{"--why adds prose after the table: it takes --format text or md, without --compare"};
    }
    std::string why_section;
    const Notebook notebook = load_notebook(request.file);

    const python::InterpreterScope interpreter;
    api::clear_program_log();
    api::set_program_logging(true);
    // A document on stdout stays clean: the script's prints go to stderr then.
    const bool document_on_stdout = format != ExplainFormat::kText && !output_path;
    const bool script_ok = run_script(notebook, document_on_stdout ? err : out, err);
    api::set_program_logging(false);

    std::vector<ProgramExplanation> explanations;
    std::vector<std::pair<CollectiveRecord, std::vector<Device>>> collectives;  // for --animation-frame
    std::vector<ExplainComparison> comparisons;
    bool explained_all = true;
    for (const api::LoggedProgram& logged : api::logged_programs()) {
      try {
        const Lowered lowered(logged.program, logged.args, logged.options, api::session().profile);
        const Compiled compiled = lowered.compile();
        ProgramExplanation explanation = explain_compiled(compiled, logged.name, hardware);
        if (why) why_section += why_program_text(compiled, logged.name);
        if (frame_request && compiled.plan().mesh) {
          const CommLog log = compiled.plan().comm_log();
          for (const CollectiveRecord& record : log.records()) {
            collectives.emplace_back(record, compiled.plan().mesh->devices());
          }
        }
        explanation.runs = logged.runs;
        if (comparing) {
          ExplainComparison comparison;
          comparison.base_label = compare_specs.empty()
                                      ? std::to_string(explanation.device_count) + " x " + explanation.hardware.name
                                      : "as written";
          comparison.other_label = variant_label(compare, compare_specs);
          comparison.other = explain_variant(logged.program, logged.args, logged.options, logged.name, target,
                                             compare_specs, hardware, api::session().profile);
          comparison.other.runs = logged.runs;
          comparison.base = explanation;
          comparisons.push_back(std::move(comparison));
        }
        explanations.push_back(std::move(explanation));
      } catch (const std::exception& e) {
        err << "shardscope explain: program " << logged.name << " cannot be " << (comparing ? "compared" : "explained")
            << ": " << e.what() << "\n";
        explained_all = !comparing;  // a comparison that cannot be made is a failure; a plain explain goes on
      }
    }
    api::clear_program_log();
    std::string document =
        comparing ? render_comparisons(comparisons, format) : render_explanations(explanations, format);
    if (why && !why_section.empty()) {
      const bool markdown = format == ExplainFormat::kMarkdown;
      document +=
          std::string(markdown ? "\n## Why\n\n```text\n" : "\n# why: shardscope's reading of the partition plan\n") +
          why_section + (markdown ? "```\n" : "");
    }
    const std::size_t count = comparing ? comparisons.size() : explanations.size();
    if (output_path) {
      write_file(*output_path, document, "--output");
      out << "wrote " << *output_path << " (" << count << " program" << (count == 1 ? "" : "s") << ")\n";
    } else {
      out << document;
    }
    if (timeline_path) {
      write_file(*timeline_path, timeline_svg(explanations), "--timeline");
      (document_on_stdout ? err : out) << "wrote timeline " << *timeline_path << "\n";
    }
    if (frame_request) {
      if (frame_request->collective >= collectives.size()) {
        throw UsageError{"--animation-frame: no collective " + std::to_string(frame_request->collective) + " (the " +
                         std::to_string(explanations.size()) + " program(s) have " +
                         std::to_string(collectives.size()) + ")"};
      }
      const auto& [record, devices] = collectives[frame_request->collective];
      const ui::DeviceViewLayout layout = ui::layout_devices(devices);
      // Half way through the step, where the window pauses a chosen step (--animate-collective).
      const ui::CollectiveFrame frame =
          ui::collective_frame(layout, ui::record_animations(record, devices), frame_request->step);
      write_file(frame_request->path, ui::collective_frame_svg(layout, record, frame, 0.5), "--animation-frame");
      (document_on_stdout ? err : out) << "wrote animation frame " << frame_request->path << " (" << frame.caption
                                       << ")\n";
    }
    return script_ok && explained_all ? 0 : 1;
  });
}

}  // namespace shardscope::cli
