#include "tests/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/curve_socket.h"

namespace trailmap::test {

std::string Binary(const std::string& name) { return std::string(TRAILMAP_BIN_DIR) + "/" + name; }

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/trailmap-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TestKey MakeKey(const std::string& dir, const std::string& name) {
  const CommandResult r = RunProgram({Binary("trailmap"), "keygen", name, "--dir", dir});
  if (r.exit_code != 0) throw std::runtime_error("trailmap keygen " + name + ": " + r.err);
  TestKey key{name, dir + "/" + name + ".key", dir + "/" + name + ".pub", ""};
  Result<CurveKeyFile> pub = LoadCurveKeyFile(key.pub, /*need_secret=*/false);
  if (!pub.ok()) throw std::runtime_error(pub.status().ToString());
  key.public_key = pub->public_key;
  return key;
}

namespace {

// Made in SetUp (before the first test), so RunProgram and Binary are usable; removed after the
// last.
class DefaultKeysEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    keys_.pair = MakeKey(dir_->path(), "test");
    keys_.clients = *dir_ / "clients";
    WriteFile(keys_.clients, "test " + keys_.pair.public_key + " ingest,query *\n");
    setenv("TRAILMAP_KEY", keys_.pair.key.c_str(), 1);
    setenv("TRAILMAP_SERVER_KEY", keys_.pair.pub.c_str(), 1);
    setenv("TRAILMAP_CLIENTS", keys_.clients.c_str(), 1);
  }
  void TearDown() override { dir_.reset(); }
  const DefaultKeys& keys() const { return keys_; }

 private:
  std::unique_ptr<TempDir> dir_;
  DefaultKeys keys_;
};

DefaultKeysEnvironment* const kDefaultKeys = static_cast<DefaultKeysEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new DefaultKeysEnvironment));

}  // namespace

const DefaultKeys& TestKeys() { return kDefaultKeys->keys(); }

CurveClient TestCurveClient() {
  const DefaultKeys& keys = TestKeys();
  Result<CurveClient> curve = ResolveCurveClient(keys.pair.key, keys.pair.pub, false);
  if (!curve.ok()) throw std::runtime_error(curve.status().ToString());
  return *curve;
}

void UseTestKeys(zmq::socket_t& socket) { ApplyCurveClient(socket, TestCurveClient()); }

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int FreePort() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      close(tcp);
      continue;
    }
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    const bool udp_free = bind(udp, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(udp);
    close(tcp);
    if (udp_free) return ntohs(addr.sin_port);
  }
  throw std::runtime_error("no free port");
}

Process::Process(std::vector<std::string> argv, const std::string& log_dir, const std::string& name)
    : out_path_(log_dir + "/" + name + ".out"), err_path_(log_dir + "/" + name + ".err") {
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (Running()) {
    Kill(SIGKILL);
    Wait();
  }
}

bool Process::Running() {
  if (exited_ || pid_ <= 0) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

void Process::Kill(int signal) {
  if (Running()) ::kill(pid_, signal);
}

int Process::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return -WTERMSIG(status_);
  return -1;
}

std::string Process::Stdout() const { return ReadFile(out_path_); }
std::string Process::Stderr() const { return ReadFile(err_path_); }

CommandResult RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  TempDir logs;
  Process p(argv, logs.path(), "cmd");
  CommandResult r;
  r.exit_code = p.Wait(timeout);
  if (r.exit_code == -1000) {
    p.Kill(SIGKILL);
    p.Wait();
  }
  r.out = p.Stdout();
  r.err = p.Stderr();
  return r;
}

int ConnectTcp(int port, std::chrono::milliseconds read_timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  if (read_timeout.count() > 0) {
    timeval t{static_cast<time_t>(read_timeout.count() / 1000),
              static_cast<suseconds_t>(read_timeout.count() % 1000 * 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  }
  return fd;
}

void SendUdp(int port, const std::string& payload) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  (void)sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&addr),
               sizeof addr);
  close(fd);
}

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace trailmap::test
