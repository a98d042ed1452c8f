#include "cli/cli_options.h"

#include <CLI/CLI.hpp>

namespace trailmap {

void AddOption(CLI::App* command, const OptionSpec& spec, OptionTarget target) {
  std::string names = "--" + spec.name;
  if (spec.short_name != 0) names += std::string(",-") + spec.short_name;
  CLI::Option* option = nullptr;
  if (spec.kind == OptionKind::kFlag) {
    if (!spec.negation.empty()) names += ",!--" + spec.negation;
    option = command->add_flag(names, *std::get<bool*>(target), spec.help);
  } else {
    option = command->add_option_function<std::string>(
        names,
        [spec, target, name = command->get_name()](const std::string& text) {
          if (Status s = ReadOption(spec, text, target); !s.ok()) {
            throw OptionRefused(name, s.message());
          }
        },
        spec.help);
    // A default that means "choose for me" (0, or a negative share) is not shown as a value.
    const std::string shown = OptionText(target);
    if (!shown.empty() && !(spec.negative_is_automatic && shown.starts_with('-'))) {
      option->default_str(shown);
    }
    if (spec.kind == OptionKind::kWhole || spec.kind == OptionKind::kNumber) {
      option->type_name("NUMBER");
    }
  }
  if (spec.required) option->required();
  if (!spec.group.empty()) option->group(spec.group);
}

}  // namespace trailmap
