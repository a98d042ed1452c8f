#include "cli/keygen_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <ostream>

#include "net/curve_keys.h"

namespace trailmap {
namespace {

// Creates `path` (never over an existing file) with `mode` and writes `text`; "" or the error.
std::string WriteNew(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return path + " exists; keygen never overwrites a key (move it away, or pick another NAME)";
    }
    return path + ": cannot create it: " + std::strerror(errno);
  }
  ::fchmod(fd, mode);  // whatever the umask said
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    return path + ": cannot write it: " + std::strerror(saved);
  }
  return "";
}

// Makes `dir` and any missing parents, each mode 0700 (a key directory is no one else's
// business); "" or the error.
std::string MakeDirectory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? "" : "--dir " + dir + " exists and is not a directory";
  }
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    if (std::string e = MakeDirectory(dir.substr(0, slash)); !e.empty()) return e;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return "--dir " + dir + ": cannot create it: " + std::strerror(errno);
  }
  ::chmod(dir.c_str(), 0700);  // whatever the umask said
  return "";
}

// "" when neither file of the pair exists, else the message: the pair is written only whole, so
// an existing NAME.pub must not be left beside a new NAME.key it does not match.
std::string RefuseExisting(const std::string& base) {
  for (const char* suffix : {".key", ".pub"}) {
    struct stat st {};
    if (::lstat((base + suffix).c_str(), &st) == 0) {
      return base + suffix +
             " exists; keygen never overwrites a key (move it away, or pick another NAME)";
    }
    if (errno != ENOENT) return base + suffix + ": cannot look for it: " + std::strerror(errno);
  }
  return "";
}

}  // namespace

CLI::App* AddKeygenCommand(CLI::App* app, KeygenFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "keygen",
      "Make a CURVE key pair for an agent, a client or an aggregator (NAME.key, NAME.pub)");
  cmd->add_option("name", flags->name,
                  "the key's name: letters, digits, '.', '_', '-' (e.g. the host, or agg-1)")
      ->required();
  cmd->add_option("--dir", flags->dir, "write the two files here")->capture_default_str();
  cmd->footer(
      "Every trailmap connection is encrypted and authenticated with CURVE (ZeroMQ): each\n"
      "program holds a key pair, and each aggregator lists the public keys it accepts.\n"
      "  NAME.key  the secret (mode 0600): whoever holds it is NAME. Never copy it off its host.\n"
      "  NAME.pub  the public half: safe to share; the aggregators' operator lists it.\n"
      "\n"
      "Examples:\n"
      "  trailmap keygen agg                    # the aggregators' key pair (the cluster's)\n"
      "  trailmap-aggregator --data DIR --key agg.key --clients clients.txt\n"
      "  trailmap keygen web-1                  # an agent's key, on web-1\n"
      "  trailmap-agent --host web-1 --key web-1.key --server-key agg.pub ...\n"
      "  trailmap keygen ops                    # a person's or trailmap-query's key\n"
      "  trailmap heatmap --key ops.key --server-key agg.pub ...\n"
      "\n"
      "clients.txt has one line per accepted key: NAME PUBLIC-KEY RIGHTS [HOSTS...]\n"
      "  web-1  <public-key of web-1.pub>  ingest        web-1\n"
      "  ops    <public-key of ops.pub>    query\n"
      "  sim    <public-key of sim.pub>    ingest,query  sim-* lab-?\n"
      "RIGHTS: ingest (send batches for the HOSTS: names or * ? patterns), query, or both.\n"
      "keygen prints the line for NAME with the host NAME; edit the rights and hosts to fit.\n"
      "A key's agent ids are bound to it: an agent's batches under an agent id another key\n"
      "used first are refused (docs/security.md).\n"
      "Exit codes: 0 written, 1 a file exists or cannot be written, 2 usage error.");
  return cmd;
}

int RunKeygen(const KeygenFlags& flags, const CliContext& context) {
  if (!IsValidKeyName(flags.name)) {
    *context.err << "trailmap keygen: NAME \"" << flags.name
                 << "\": use 1-64 letters, digits, '.', '_' or '-'\n";
    return kExitUsage;
  }
  char public_key[41] = {}, secret_key[41] = {};
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    *context.err << "trailmap keygen: this libzmq cannot make CURVE keys ("
                 << zmq_strerror(zmq_errno()) << "); it needs libsodium support\n";
    return kExitError;
  }
  const CurveKeyFile key{flags.name, public_key, secret_key};
  const std::string base = flags.dir + "/" + flags.name;
  std::string e = MakeDirectory(flags.dir);
  if (e.empty()) e = RefuseExisting(base);
  if (e.empty()) e = WriteNew(base + ".key", FormatCurveKeyFile(key), 0600);
  if (e.empty()) {
    e = WriteNew(base + ".pub", FormatCurveKeyFile({key.name, key.public_key, ""}), 0644);
    if (!e.empty()) ::unlink((base + ".key").c_str());  // no secret without its public half
  }
  if (!e.empty()) {
    *context.err << "trailmap keygen: " << e << "\n";
    return kExitError;
  }
  *context.out << "wrote " << base << ".key (secret, mode 0600) and " << base << ".pub\n"
               << "list it on the aggregators (clients file):\n"
               << flags.name << " " << public_key << " ingest " << flags.name << "\n";
  return kExitOk;
}

}  // namespace trailmap
