// Comparing two runs of one script cell by cell (`shardscope diff`): the inspection module's JSON records of
// each cell (printed text, arrays with shardings and values, compiled programs' collectives) side by side.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

struct CellDifference {
  enum class Kind { kOutput, kSharding, kCollectives, kValues };
  int cell = 0;  // 1-based
  Kind kind = Kind::kOutput;
  std::string subject;  // the variable or program; empty for printed output
  std::string left;     // what each side had, one line each
  std::string right;
};

struct ValueTolerance {
  double rtol = 1e-5;  // numpy.allclose's defaults: |a - b| <= atol + rtol * |b|
  double atol = 1e-8;
};

// What the notebook's output area shows for a cell record: stdout, the value shown, the exception line.
[[nodiscard]] std::string printed_text(const nlohmann::json& cell);

// Every difference between the two runs' cell records (same script, so cells pair by position); a cell only one
// side reached is a printed-output difference.
[[nodiscard]] std::vector<CellDifference> diff_runs(const std::vector<nlohmann::json>& left,
                                                    const std::vector<nlohmann::json>& right,
                                                    const ValueTolerance& tolerance = {});

// The report: one paragraph per difference naming the cell and the two sides, then a summary line.
[[nodiscard]] std::string diff_report(const std::vector<CellDifference>& differences, const std::string& left_name,
                                      const std::string& right_name, std::size_t cells);

}  // namespace shardscope
