// libFuzzer harness: .py scripts as `shardscope run` reads them: bytes decoded as CPython does (BOM, PEP 263),
// then split into Jupytext percent cells.
#include "fuzz_support.h"
#include "io/notebook.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = shardscope::fuzz::as_text(data, size);
  shardscope::fuzz::expect_handled([&] {
    const std::string text = shardscope::decode_python_source(std::string(bytes));
    (void)shardscope::parse_python_script(text);
  });
  shardscope::fuzz::expect_handled([&] { (void)shardscope::parse_percent_script(bytes); });
  shardscope::fuzz::expect_handled([&] {
    (void)shardscope::normalize_output_text(bytes);
    (void)shardscope::first_difference(bytes, shardscope::strip_ansi(bytes));
  });
  return 0;
}
