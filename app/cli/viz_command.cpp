// `shardscope viz`: one shard grid from the command line, exactly as JAX prints it.
#include <fstream>
#include <iostream>
#include <limits>

#include "base/error.h"
#include "base/text_parse.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "sharding/notation.h"
#include "sharding/sharding_recipe.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

namespace shardscope::cli {

JaxProfile profile_from(const Arguments& arguments) {
  const auto version = arguments.value("--jax-version");
  return version ? JaxProfile(JaxVersion::parse(*version)) : JaxProfile();
}

int guarded(std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    err << "shardscope: " << e.message << " (see shardscope --help)\n";
    return 2;
  } catch (const Error& e) {
    err << e.python_type() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
}

namespace {

ShardingRecipe recipe_from(const Arguments& arguments) {
  ShardingRecipe recipe;
  if (auto v = arguments.value("--devices")) recipe.devices_preset = *v;
  if (auto v = arguments.axis_sizes("--mesh")) recipe.mesh_axes = *v;
  if (auto v = arguments.value("--axis-types")) recipe.axis_types = parse_axis_types(*v);
  if (auto v = arguments.int_list("--device-ids")) recipe.device_ids = *v;
  if (auto v = arguments.value("--spec")) recipe.spec_text = *v;
  if (auto v = arguments.value("--memory-kind")) recipe.memory_kind = *v;
  if (auto v = arguments.integer("--single-device", 0, std::numeric_limits<int32_t>::max())) {
    recipe.single_device_id = *v;
  }
  return recipe;
}

VizOptions options_from(const Arguments& arguments, bool use_color) {
  VizOptions options;
  options.use_color = use_color;
  // Positive and bounded: the picture is printed, so it must stay a size a terminal can show.
  if (auto v = arguments.number("--scale", 0.01, kMaxVizScale)) options.scale = *v;
  if (auto v = arguments.integer("--min-width", 0, kMaxVizWidth)) options.min_width = static_cast<int>(*v);
  if (auto v = arguments.integer("--max-width", 1, kMaxVizWidth)) options.max_width = static_cast<int>(*v);
  if (auto v = arguments.value("--color-map")) {
    options.color_map = v->starts_with("#") ? listed_color_map(split(*v, ',')) : named_color_map(*v);
  }
  options.small_multiples = arguments.flag("--small-multiples");
  options.uneven_shards = arguments.flag("--uneven");
  if (auto v = arguments.value("--labels")) {
    if (*v == "ids")
      options.label_style = CellLabelStyle::kDeviceIds;
    else if (*v == "coords")
      options.label_style = CellLabelStyle::kChipCoords;
    else if (*v == "mesh")
      options.label_style = CellLabelStyle::kMeshPosition;
    else
      throw value_error("Invalid --labels '" + *v + "': use ids, coords or mesh");
  }
  return options;
}

}  // namespace

int run_viz(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const Arguments arguments(
        args,
        {"--shape", "--devices", "--mesh", "--axis-types", "--device-ids", "--spec", "--single-device", "--memory-kind",
         "--scale", "--min-width", "--max-width", "--color-map", "--svg", "--jax-version", "--labels", "--palette"},
        {"--color", "--highlight", "--small-multiples", "--uneven", "--print-sharding", "--notation"});
    const auto shape_value = arguments.int_list("--shape");
    if (!shape_value) throw UsageError{"viz needs --shape, e.g. --shape 8,8"};
    const Shape& shape = *shape_value;
    const JaxProfile profile = profile_from(arguments);
    const ResolvedSharding resolved = resolve_sharding(recipe_from(arguments), profile);
    const bool use_color = arguments.flag("--color");
    const VizLayout layout = compute_layout(shape, resolved.sharding, options_from(arguments, use_color), profile);
    // --palette colours the diagram only: the printed picture is JAX's, in tab20b (or --color-map).
    const auto palette = arguments.value("--palette");
    if (palette && !arguments.value("--svg")) throw UsageError{"--palette colours the --svg diagram; add --svg FILE"};
    if (arguments.flag("--print-sharding")) out << sharding_repr(resolved.sharding, profile) << "\n";
    out << render_text(layout, TextRenderOptions{arguments.flag("--highlight") && !use_color});
    // Beyond JAX, asked for explicitly: the same sharding in the scaling book's, Shardy's and XLA's notations.
    if (arguments.flag("--notation")) {
      const auto* named = std::get_if<NamedSharding>(&resolved.sharding);
      if (named == nullptr)
        throw UsageError{"--notation needs a mesh sharding (--mesh and --spec), not --single-device"};
      out << notations_text(sharding_notations(*named, shape.size(), profile));
    }
    if (const auto svg_path = arguments.value("--svg")) {
      // The diagram always carries the colours of the ANSI picture.
      VizOptions svg_options = options_from(arguments, true);
      if (palette) svg_options.palette = parse_palette(*palette);
      const VizLayout colored =
          use_color && !palette ? layout : compute_layout(shape, resolved.sharding, svg_options, profile);
      std::ofstream file(*svg_path);
      file << render_svg(colored, SvgRenderOptions{9.0, 18.0, sharding_repr(resolved.sharding, profile)});
      if (!file) throw runtime_error("Could not write SVG file '" + *svg_path + "'");
    }
    return 0;
  });
}

}  // namespace shardscope::cli
