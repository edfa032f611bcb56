// `shardscope explain FILE`: runs a script or notebook, then prices every jit program it ran or lowered:
// equations and collectives with shardings, bytes, FLOPs, estimated times, bounds and reasons (text, md or csv).
#include <fstream>
#include <iostream>

#include "api/program_log.h"
#include "api/session.h"
#include "base/error.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "cost/explain.h"
#include "io/notebook.h"
#include "python/host.h"

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

}  // namespace

int run_explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const std::set<std::string> valued = {"--devices", "--jax-version", "--format", "--hardware", "--output"};
    const FileRequest request = split_file_argument(args, valued, "explain needs a FILE (.py or .ipynb)");
    const Arguments arguments(request.options, valued, {});
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
    const Notebook notebook = load_notebook(request.file);

    const python::InterpreterScope interpreter;
    api::clear_program_log();
    api::set_program_logging(true);
    // A document on stdout stays clean: the script's prints go to stderr then.
    const bool document_on_stdout = format != ExplainFormat::kText && !output_path;
    const bool script_ok = run_script(notebook, document_on_stdout ? err : out, err);
    api::set_program_logging(false);

    std::vector<ProgramExplanation> explanations;
    for (const api::LoggedProgram& logged : api::logged_programs()) {
      try {
        const Lowered lowered(logged.program, logged.args, logged.options, api::session().profile);
        ProgramExplanation explanation = explain_compiled(lowered.compile(), logged.name, hardware);
        explanation.runs = logged.runs;
        explanations.push_back(std::move(explanation));
      } catch (const std::exception& e) {
        err << "shardscope explain: program " << logged.name << " cannot be explained: " << e.what() << "\n";
      }
    }
    api::clear_program_log();
    const std::string document = render_explanations(explanations, format);
    if (output_path) {
      std::ofstream file(*output_path, std::ios::binary);
      if (!file || !(file << document)) throw UsageError{"cannot write --output '" + *output_path + "'"};
      out << "wrote " << *output_path << " (" << explanations.size() << " program"
          << (explanations.size() == 1 ? "" : "s") << ")\n";
    } else {
      out << document;
    }
    return script_ok ? 0 : 1;
  });
}

}  // namespace shardscope::cli
