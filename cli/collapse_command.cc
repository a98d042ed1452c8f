#include "cli/collapse_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <istream>
#include <ostream>

#include "stacks/stack_collapse.h"

namespace trailmap {

CLI::App* AddCollapseCommand(CLI::App* app, CollapseFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "collapse", "Fold `perf script` output into stacks (as stackcollapse-perf.pl does)");
  cmd->add_flag("--pid", flags->pid, "Name processes comm-PID");
  cmd->add_flag("--tid", flags->tid, "Name processes comm-PID/TID");
  cmd->add_flag("--kernel", flags->kernel, "Mark kernel frames with _[k]");
  cmd->add_flag("--jit", flags->jit, "Mark JIT frames (/tmp/perf-PID.map) with _[j]");
  cmd->add_flag("--all", flags->all, "Both --kernel and --jit");
  cmd->add_flag("--addrs", flags->addrs, "Keep the address of [unknown] frames");
  cmd->add_option("input", flags->input, "perf script text: FILE, or - for standard input")
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  perf script | trailmap collapse > out.folded\n"
      "  trailmap collapse --all out.perf | trailmap flame --folded - -o cpu.svg\n"
      "Exit codes: 0 ok (dropped lines are reported on stderr), 1 the input cannot be read.");
  return cmd;
}

int RunCollapse(const CollapseFlags& flags, const CliContext& context, std::istream& in) {
  CollapseOptions options;
  options.include_pid = flags.pid;
  options.include_tid = flags.tid;
  options.annotate_kernel = flags.kernel || flags.all;
  options.annotate_jit = flags.jit || flags.all;
  options.include_addrs = flags.addrs;

  std::ifstream file;
  std::istream* input = &in;
  if (flags.input != "-") {
    file.open(flags.input, std::ios::binary);
    if (!file) {
      *context.err << "trailmap collapse: cannot open " << flags.input << "\n";
      return kExitError;
    }
    input = &file;
  }
  StackCollapser collapser(options);
  std::string chunk(1 << 20, '\0');
  while (*input) {
    input->read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    collapser.Add(std::string_view(chunk.data(), static_cast<size_t>(input->gcount())));
  }
  if (input->bad()) {
    *context.err << "trailmap collapse: cannot read " << flags.input << "\n";
    return kExitError;
  }
  const FoldedStacks stacks = collapser.Finish();
  const CollapseStats& stats = collapser.stats();
  std::ostream& err = *context.err;
  if (stats.other_event_records > 0) {
    err << "trailmap collapse: kept events of type " << stats.event << "; skipped "
        << stats.other_event_records << " records of";
    for (const std::string& e : stats.other_events) err << " " << e;
    err << "\n";
  }
  if (stats.malformed_lines > 0) {
    err << "trailmap collapse: skipped " << stats.malformed_lines << " unrecognized lines, first:";
    for (const auto& m : stats.malformed_examples) {
      err << "\n  line " << m.line_number << ": " << m.text;
    }
    err << "\n";
  }
  if (stats.unterminated_record) {
    err << "trailmap collapse: the input ends inside a record (no blank line after it); like "
           "stackcollapse-perf.pl, it was not counted\n";
  }
  const Status written = WriteOutput(context, "", FormatFolded(stacks));
  if (!written.ok()) {
    err << "trailmap collapse: " << written.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace trailmap
