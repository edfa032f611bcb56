// libFuzzer harness: the SVG writer, fed the layout of a fuzzed shape, mesh, spec and picture options; the
// output must be well-formed XML (libxml2 parses it back).
#include <libxml/parser.h>

#include <cstdlib>

#include "fuzz_recipe.h"
#include "fuzz_support.h"
#include "viz/colors.h"
#include "viz/layout.h"
#include "viz/svg_renderer.h"

namespace {

void silent(void*, const char*, ...) {}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  xmlSetGenericErrorFunc(nullptr, silent);
  fuzz::expect_handled([&] {
    const auto fields = fuzz::key_values(fuzz::as_text(data, size));
    const auto field = [&](const char* key) -> const std::string* {
      const auto it = fields.find(key);
      return it == fields.end() ? nullptr : &it->second;
    };
    const JaxProfile profile = fuzz::profile_from(fields);
    const ResolvedSharding resolved = resolve_sharding(fuzz::recipe_from(fields), profile);
    Shape shape = {8, 8};
    if (const auto* v = field("shape")) {
      shape = parse_int_list(*v, "--shape");
      (void)checked_product(shape, "--shape");
    }
    VizOptions options;
    if (const auto* v = field("scale")) options.scale = parse_number(*v, "scale");
    // Widths as Python passes them: any integer, checked by check_viz_width before it narrows to an int.
    const auto width = [&](const std::string& text, const char* name) {
      const std::vector<int64_t> value = parse_int_list(text, name);
      if (value.size() != 1) throw value_error(std::string(name) + " takes one integer");
      check_viz_width(name, value[0]);
      return static_cast<int>(value[0]);
    };
    if (const auto* v = field("min_width")) options.min_width = width(*v, "min_width");
    if (const auto* v = field("max_width")) options.max_width = width(*v, "max_width");
    if (const auto* v = field("color_map")) {
      options.color_map = v->starts_with("#") ? listed_color_map(split(*v, ',')) : named_color_map(*v);
    }
    options.small_multiples = fields.count("small_multiples") != 0;
    options.uneven_shards = fields.count("uneven") != 0;
    if (const auto* v = field("labels")) {
      options.label_style = *v == "coords" ? CellLabelStyle::kChipCoords
                            : *v == "mesh" ? CellLabelStyle::kMeshPosition
                                           : CellLabelStyle::kDeviceIds;
    }
    check_viz_options(options);
    const VizLayout layout = compute_layout(shape, resolved.sharding, options, profile);
    const std::string svg = render_svg(layout, SvgRenderOptions{9.0, 18.0, sharding_repr(resolved.sharding, profile)});
    // A SAX pass with no handlers checks well-formedness without building a tree: the largest legal grids
    // (65,536 devices, tens of MB of SVG) stay seconds per input under ASan instead of a minute of freeing nodes.
    xmlSAXHandler no_callbacks{};
    xmlParserCtxtPtr parser = xmlCreatePushParserCtxt(&no_callbacks, nullptr, nullptr, 0, "fuzz.svg");
    if (parser == nullptr) std::abort();
    xmlCtxtUseOptions(parser, XML_PARSE_NONET | XML_PARSE_HUGE);
    xmlParseChunk(parser, svg.data(), static_cast<int>(svg.size()), /*terminate=*/1);
    const bool well_formed = parser->wellFormed != 0;
    if (parser->myDoc != nullptr) xmlFreeDoc(parser->myDoc);
    xmlFreeParserCtxt(parser);
    if (!well_formed) std::abort();  // the writer produced text no SVG viewer can open
  });
  return 0;
}
