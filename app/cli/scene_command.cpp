// `shardscope scene`: the terminal form of a scene — device list, shard grids, SVG files.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/error.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "io/scene.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

namespace shardscope::cli {
namespace {

std::string slug(const std::string& title) {
  std::string out;
  for (const char c : title) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.substr(0, 48);
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw value_error("Could not open scene file '" + path + "'");
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

bool stdout_wants_color() { return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr; }

}  // namespace

int run_scene(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const Arguments arguments(args, {"--scene", "--out", "--jax-version"}, {"--color", "--no-color"});
    const auto scene_path = arguments.value("--scene");
    const Scene scene = scene_path ? parse_scene(read_file(*scene_path), *scene_path)
                                   : parse_scene(default_scene_json(), "default scene");
    JaxProfile profile;
    if (auto v = arguments.value("--jax-version"))
      profile = JaxProfile(JaxVersion::parse(*v));
    else if (scene.jax_version)
      profile = JaxProfile(*scene.jax_version);
    const bool use_color = arguments.flag("--color") || (!arguments.flag("--no-color") && stdout_wants_color());
    const std::filesystem::path out_dir = arguments.value("--out").value_or("shardscope-out");
    std::filesystem::create_directories(out_dir);

    out << "# " << scene.title << "\n\n";
    out << "jax.devices() on " << scene.devices_preset << ":\n"
        << devices_listing(make_device_preset(scene.devices_preset).devices) << "\n";
    int failures = 0;
    int written = 0;
    for (std::size_t i = 0; i < scene.steps.size(); ++i) {
      const SceneStep& step = scene.steps[i];
      out << "\n## " << (i + 1) << ". " << step.title << "\n";
      // A broken step is reported and the scene goes on.
      failures +=
          guarded(out,
                  [&] {
                    const ResolvedSharding resolved = resolve_sharding(step.recipe, profile);
                    VizOptions options;
                    options.use_color = use_color;
                    out << sharding_repr(resolved.sharding, profile) << "\n";
                    out << render_text(compute_layout(step.shape, resolved.sharding, options, profile), {});
                    options.use_color = true;
                    const VizLayout colored = compute_layout(step.shape, resolved.sharding, options, profile);
                    char prefix[8];
                    std::snprintf(prefix, sizeof prefix, "%02zu-", i + 1);
                    const std::filesystem::path svg_path = out_dir / (prefix + slug(step.title) + ".svg");
                    std::ofstream file(svg_path);
                    file << render_svg(colored, SvgRenderOptions{9.0, 18.0, sharding_repr(resolved.sharding, profile)});
                    if (!file) throw runtime_error("Could not write '" + svg_path.string() + "'");
                    ++written;
                    return 0;
                  }) != 0
              ? 1
              : 0;
    }
    out << "\nWrote " << written << " SVG diagram(s) to " << out_dir.string() << "/\n";
    return failures == 0 ? 0 : 1;
  });
}

}  // namespace shardscope::cli
