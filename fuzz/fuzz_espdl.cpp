// libFuzzer target for the .espdl reader: any byte string must be parsed or refused with a
// tvh::Error, never crash. A file that parses also has its filters converted and its embedded test
// vectors run, the other code paths that consume untrusted file content.
#include <stddef.h>
#include <stdint.h>

#include "host/base/error.h"
#include "host/espdl/espdl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tvh::EspdlModel model = tvh::espdl_parse(data, size, "fuzz.espdl");
    for (const tvh::EspdlNode& node : model.nodes) {
      if (node.op_type != "Conv" && node.op_type != "Gemm") continue;
      try {
        (void)tvh::espdl_node_filter(model, node);
      } catch (const tvh::Error&) {
      }
    }
    (void)tvh::espdl_run_test_vectors(model);
  } catch (const tvh::Error&) {
  }
  return 0;
}
