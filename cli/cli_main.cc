// trailmap: the command line. main() reads the clock, the environment and the terminal once,
// builds the CliContext and hands it to the one command that runs.
#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "cli/catalog_command.h"
#include "cli/cli_common.h"
#include "cli/cli_options.h"
#include "cli/cluster_command.h"
#include "cli/collapse_command.h"
#include "cli/columns_command.h"
#include "cli/flame_command.h"
#include "cli/heatmap_command.h"
#include "cli/import_command.h"
#include "cli/keygen_command.h"
#include "cli/line_command.h"
#include "cli/outliers_command.h"
#include "cli/stats_command.h"
#include "cli/subsecond_command.h"
#include "cli/trails_command.h"
#include "core/clock.h"
#include "core/huge_heap.h"
#include "core/log.h"
#include "net/client_keys.h"
#include "query/fetch/query_environment.h"

int main(int argc, char** argv) {
  using namespace trailmap;
  PreferHugePages();  // views of thousands of columns allocate tens of MB at once: core/huge_heap.h
  SetLogProgram("trailmap");
  CLI::App app{
      "trailmap: per-second latency distributions across a fleet.\n"
      "Queries fan out to every aggregator (query port 7401); import sends to ingest ports "
      "(7400).\nTimes: -10m, -1h, now, unix seconds, RFC 3339. Values: 10ms, 1.5s, 250us, 4KiB.\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer.",
      "trailmap"};
  app.require_subcommand(1);
  // Given before or after the command: every command that connects uses them.
  app.fallthrough();
  ClientKeyFlags keys;
  AddClientKeyFlags(&app, &keys, "this client");
  app.footer("Run `trailmap COMMAND --help` for a command's flags and examples.");

  HeatmapFlags heatmap;
  StatsFlags stats;
  TrailsFlags trails;
  ImportFlags import;
  ColumnsFlags columns;
  CollapseFlags collapse;
  SubsecondFlags subsecond;
  FlameFlags flame;
  MetricsFlags metrics;
  FieldsFlags fields;
  LineFlags line;
  OutliersFlags outliers;
  CLI::App* heatmap_cmd = AddHeatmapCommand(&app, &heatmap);
  CLI::App* stats_cmd = AddStatsCommand(&app, &stats);
  CLI::App* trails_cmd = AddTrailsCommand(&app, &trails);
  CLI::App* import_cmd = AddImportCommand(&app, &import);
  CLI::App* columns_cmd = AddColumnsCommand(&app, &columns);
  CLI::App* collapse_cmd = AddCollapseCommand(&app, &collapse);
  CLI::App* subsecond_cmd = AddSubsecondCommand(&app, &subsecond);
  CLI::App* flame_cmd = AddFlameCommand(&app, &flame);
  CLI::App* metrics_cmd = AddMetricsCommand(&app, &metrics);
  ClusterFlags cluster;
  CLI::App* cluster_cmd = AddClusterCommand(&app, &cluster);
  CLI::App* fields_cmd = AddFieldsCommand(&app, &fields);
  CLI::App* line_cmd = AddLineCommand(&app, &line);
  CLI::App* outliers_cmd = AddOutliersCommand(&app, &outliers);
  KeygenFlags keygen;
  CLI::App* keygen_cmd = AddKeygenCommand(&app, &keygen);

  try {
    app.parse(argc, argv);
  } catch (const OptionRefused& e) {
    std::cerr << "trailmap " << e.command() << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, or the error and a hint
    return code == 0 ? kExitOk : kExitUsage;
  }

  for (const CLI::App* command : app.get_subcommands()) {
    if (Status s = CheckOptionsAreUtf8(*command); !s.ok()) {
      std::cerr << "trailmap " << command->get_name() << ": " << s.message() << "\n";
      return kExitUsage;
    }
  }
  // keygen makes keys: it needs none, so a half-set TRAILMAP_KEY / TRAILMAP_SERVER_KEY (or none)
  // is no reason to refuse it.
  if (keygen_cmd->parsed()) {
    CliContext context;
    context.out = &std::cout;
    context.err = &std::cerr;
    return RunKeygen(keygen, context);
  }

  zmq::context_t zmq_context(1);
  CliContext context;
  context.now = UnixSecondsNow();
  // Keys are needed only by a command that queries: its query says so (CurveClient::Usable).
  if (Status s = SetUpQueryContext(keys, /*need_keys=*/false, &zmq_context, &context); !s.ok()) {
    std::cerr << "trailmap: " << s.message() << "\n";
    return kExitUsage;
  }
  context.stdout_is_terminal = isatty(STDOUT_FILENO) == 1;
  winsize ws{};
  if (context.stdout_is_terminal && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
    context.terminal_columns = ws.ws_col;
  }
  context.out = &std::cout;
  context.err = &std::cerr;

  try {
    if (heatmap_cmd->parsed()) return RunHeatmap(heatmap, context);
    if (stats_cmd->parsed()) return RunStats(stats, context);
    if (trails_cmd->parsed()) return RunTrails(trails, context);
    if (import_cmd->parsed()) return RunImport(import, context);
    if (columns_cmd->parsed()) return RunColumns(columns, context);
    if (collapse_cmd->parsed()) return RunCollapse(collapse, context, std::cin);
    if (subsecond_cmd->parsed()) return RunSubsecond(subsecond, context, std::cin);
    if (flame_cmd->parsed()) return RunFlame(flame, context, std::cin);
    if (metrics_cmd->parsed()) return RunMetrics(metrics, context);
    if (cluster_cmd->parsed()) return RunCluster(cluster, context);
    if (fields_cmd->parsed()) return RunFields(fields, context);
    if (line_cmd->parsed()) return RunLine(line, context);
    if (outliers_cmd->parsed()) return RunOutliers(outliers, context);
  } catch (const std::exception& e) {
    // A bug, or a resource failure nothing below expected: say so and exit 1.
    std::cerr << "trailmap: internal error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitUsage;
}
