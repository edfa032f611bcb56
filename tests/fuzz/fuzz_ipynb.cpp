// libFuzzer harness: .ipynb (nbformat 4 JSON) notebooks.
#include "fuzz_support.h"
#include "io/notebook.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardscope::fuzz::expect_handled([&] { (void)shardscope::parse_ipynb(shardscope::fuzz::as_text(data, size)); });
  return 0;
}
