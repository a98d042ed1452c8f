#include "agent/folded_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <optional>
#include <thread>

#include "core/boundary.h"
#include "core/clock.h"
#include "core/counts.h"
#include "core/folded.h"
#include "core/log.h"

namespace trailmap {
namespace asio = boost::asio;
using asio::local::stream_protocol;

namespace {

std::string Shown(std::string_view line) {
  if (line.size() <= 80) return "'" + std::string(line) + "'";
  return "'" + std::string(line.substr(0, 77)) + "...'";
}

}  // namespace

Status ValidateFoldedSourceOptions(const FoldedSourceOptions& o) {
  if (o.path.empty() && o.socket.empty()) {
    return Status::InvalidArgument("folded source: neither a path nor a socket is set");
  }
  if (Status s = ValidateMetricName(o.metric); !s.ok()) {
    return Status::InvalidArgument("folded metric: " + s.message());
  }
  if (Result<std::string> f = CanonicalFields(o.fields); !f.ok()) {
    return Status::InvalidArgument("folded fields: " + f.status().message());
  }
  if (o.socket.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Status::InvalidArgument("folded socket path is longer than " +
                                   std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                                   " bytes: " + o.socket);
  }
  if (o.max_line_bytes < 16 || o.max_depth < 1 || o.max_frame_bytes < 1 || o.max_clients < 1 ||
      o.poll_ms < 1) {
    return Status::InvalidArgument("folded source limits must be positive");
  }
  return Status::Ok();
}

FoldedLineParser::FoldedLineParser(const FoldedSourceOptions& options, FieldSet base_fields)
    : options_(options), base_(std::move(base_fields)) {
  Result<std::string> f = CanonicalFields(base_);
  fields_ = f.ok() ? *f : "";
}

FoldedLineParser::Parsed FoldedLineParser::Parse(std::string_view line, int64_t now_second) {
  Parsed r;
  while (!line.empty() && IsFoldedBlank(line.back())) line.remove_suffix(1);
  size_t lead = 0;
  while (lead < line.size() && IsFoldedBlank(line[lead])) ++lead;
  line.remove_prefix(lead);
  if (line.empty()) return r;
  if (line[0] == '#') {
    if (!line.starts_with("#fields") || (line.size() > 7 && !IsFoldedBlank(line[7]))) return r;
    std::string_view spec = line.substr(7);
    while (!spec.empty() && IsFoldedBlank(spec.front())) spec.remove_prefix(1);
    FieldSet merged = base_;
    for (size_t start = 0; start <= spec.size() && !spec.empty();) {
      const size_t comma = spec.find(',', start);
      const std::string_view kv =
          spec.substr(start, comma == std::string_view::npos ? comma : comma - start);
      const size_t eq = kv.find('=');
      if (eq == std::string_view::npos) {
        r.ok = false;
        r.error = "#fields: '" + std::string(kv) + "' is not KEY=VALUE";
        return r;
      }
      const std::string key(kv.substr(0, eq));
      bool replaced = false;
      for (Field& f : merged) {
        if (f.first == key && !replaced) {
          f.second = std::string(kv.substr(eq + 1));
          replaced = true;
        }
      }
      if (!replaced) merged.emplace_back(key, std::string(kv.substr(eq + 1)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    Result<std::string> canonical = CanonicalFields(merged);
    if (!canonical.ok()) {
      r.ok = false;
      r.error = "#fields: " + canonical.status().message();
      return r;
    }
    fields_ = *canonical;
    return r;
  }
  int64_t second = now_second;
  if (line[0] == '@') {
    size_t end = 1;
    while (end < line.size() && !IsFoldedBlank(line[end])) ++end;
    uint64_t t = 0;
    if (!ParseFoldedWholeCount(line.substr(1, end - 1), &t) || t < 1 || t > 9'999'999'999ull) {
      r.ok = false;
      r.error = "time '" + std::string(line.substr(0, end)) + "' is not @UNIX_SECONDS";
      return r;
    }
    second = static_cast<int64_t>(t);
    while (end < line.size() && IsFoldedBlank(line[end])) ++end;
    line.remove_prefix(end);
  }
  const FoldedLine parts = SplitFoldedLine(line);
  if (parts.stack.empty()) {
    r.ok = false;
    r.error = "no count after the stack (want \"frame;frame COUNT\")";
    return r;
  }
  uint64_t count = 0;
  if (!ParseFoldedWholeCount(parts.count, &count) || count == 0) {
    r.ok = false;
    r.error = "count '" + std::string(parts.count) + "' is not a whole number from 1 to 2^40";
    return r;
  }
  if (count > kMaxItemCount) {
    r.ok = false;
    r.over_count = true;
    r.error = "count " + std::to_string(count) +
              " is more than one line may carry (2^40 = " + std::to_string(kMaxItemCount) + ")";
    return r;
  }
  const std::string_view stack = parts.stack;
  StackSample& s = r.sample;
  for (size_t start = 0;;) {
    const size_t semi = stack.find(';', start);
    std::string_view frame =
        stack.substr(start, semi == std::string_view::npos ? semi : semi - start);
    if (frame.empty()) {
      r.ok = false;
      r.error = "empty frame (frame " + std::to_string(s.frames.size() + 1) + ") in the stack";
      return r;
    }
    if (s.frames.size() == options_.max_depth) {
      r.truncated_stack = true;
      break;
    }
    if (frame.size() > options_.max_frame_bytes) {
      frame = frame.substr(0, options_.max_frame_bytes);
      ++r.truncated_frames;
    }
    s.frames.emplace_back(frame);
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  s.second = second;
  s.metric = options_.metric;
  s.fields = fields_;
  s.count = count;
  r.has_sample = true;
  return r;
}

// ---------------------------------------------------------------------------------------------

struct FoldedSource::Impl {
  struct Stream {
    std::string name;  // "socket client 3", "file /x"
    FoldedLineParser parser;
    std::string partial;
    bool skipping_long = false;  // inside a too long line, until its '\n'
    uint64_t line_number = 0;
    uint64_t logged = 0;
    Stream(std::string n, const FoldedSourceOptions& o) : name(std::move(n)), parser(o, o.fields) {}
  };
  struct Client {
    stream_protocol::socket socket;
    Stream stream;
    std::array<char, 65536> buf;
    Client(asio::io_context& io, std::string name, const FoldedSourceOptions& o)
        : socket(io), stream(std::move(name), o) {}
  };

  Impl(FoldedSourceOptions o, StackSink s) : options(std::move(o)), sink(std::move(s)) {}

  FoldedSourceOptions options;
  StackSink sink;
  asio::io_context io;
  std::optional<stream_protocol::acceptor> acceptor;
  std::list<Client> clients;
  uint64_t next_client = 0;
  // path
  std::optional<Stream> path_stream;
  int path_fd = -1;
  bool path_regular = false;
  off_t path_offset = 0;
  std::optional<asio::posix::stream_descriptor> path_pipe;
  std::optional<asio::steady_timer> poll_timer;
  std::array<char, 65536> path_buf;
  std::thread thread;
  bool started = false;

  mutable std::mutex mu;
  FoldedSourceStats stats;
  std::atomic<uint64_t> thread_failures{0};

  void Line(Stream& st, std::string_view line) {
    ++st.line_number;
    FoldedLineParser::Parsed r = st.parser.Parse(line, UnixSecondsNow());
    {
      std::lock_guard<std::mutex> lock(mu);
      ++stats.lines;
      if (!r.ok) {
        if (r.over_count) ++stats.over_count;
        Reject(st, r.error + ": " + Shown(line));
        return;
      }
      if (r.truncated_stack) ++stats.truncated_stacks;
      stats.truncated_frames += r.truncated_frames;
      if (r.has_sample) ++stats.samples;
    }
    if (r.has_sample) sink(std::move(r.sample));
  }

  // Called with mu held.
  void Reject(Stream& st, const std::string& reason) {
    ++stats.malformed;
    std::string text = st.name + " line " + std::to_string(st.line_number) + ": " + reason;
    if (st.logged < FoldedSourceStats::kMaxLoggedErrors) {
      ++st.logged;
      Log("folded source: " + text +
          (st.logged == FoldedSourceStats::kMaxLoggedErrors ? " (more on this stream not logged)"
                                                            : ""));
    }
    if (stats.recent_errors.size() == FoldedSourceStats::kMaxRecentErrors) {
      stats.recent_errors.erase(stats.recent_errors.begin());
    }
    stats.recent_errors.push_back(std::move(text));
  }

  void Feed(Stream& st, std::string_view data) {
    while (!data.empty()) {
      const size_t nl = data.find('\n');
      const std::string_view piece = data.substr(0, nl);
      if (st.skipping_long) {
        if (nl == std::string_view::npos) return;
        st.skipping_long = false;
      } else if (st.partial.size() + piece.size() > options.max_line_bytes) {
        ++st.line_number;
        {
          std::lock_guard<std::mutex> lock(mu);
          ++stats.lines;
          Reject(st, "line longer than " + std::to_string(options.max_line_bytes) + " bytes");
        }
        st.partial.clear();
        if (nl == std::string_view::npos) {
          st.skipping_long = true;
          return;
        }
      } else if (nl == std::string_view::npos) {
        st.partial.append(piece);
        return;
      } else if (st.partial.empty()) {
        Line(st, piece);
      } else {
        st.partial.append(piece);
        Line(st, st.partial);
        st.partial.clear();
      }
      data.remove_prefix(nl + 1);
    }
  }

  void EndStream(Stream& st) {
    if (!st.partial.empty() && !st.skipping_long) Line(st, st.partial);
    st.partial.clear();
    st.skipping_long = false;
  }

  // ---- socket
  void Accept() {
    auto& client =
        clients.emplace_back(io, "socket client " + std::to_string(++next_client), options);
    auto it = std::prev(clients.end());
    acceptor->async_accept(client.socket, [this, it](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        clients.erase(it);
        Log("folded source: accept on " + options.socket + ": " + ec.message());
        Accept();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        if (clients.size() > options.max_clients) {
          ++stats.clients_refused;
        } else {
          ++stats.clients;
        }
      }
      if (clients.size() > options.max_clients) {
        clients.erase(it);
      } else {
        Read(it);
      }
      Accept();
    });
  }

  void Read(std::list<Client>::iterator it) {
    it->socket.async_read_some(asio::buffer(it->buf),
                               [this, it](const boost::system::error_code& ec, size_t n) {
                                 if (ec == asio::error::operation_aborted) return;
                                 if (n > 0) Feed(it->stream, std::string_view(it->buf.data(), n));
                                 if (ec) {
                                   EndStream(it->stream);
                                   clients.erase(it);
                                   return;
                                 }
                                 Read(it);
                               });
  }

  // ---- path
  void ReadRegular() {
    const ssize_t n = pread(path_fd, path_buf.data(), path_buf.size(), path_offset);
    if (n > 0) {
      path_offset += n;
      Feed(*path_stream, std::string_view(path_buf.data(), static_cast<size_t>(n)));
      asio::post(io, [this] { ReadRegular(); });
      return;
    }
    if (n < 0 && errno == EINTR) {
      asio::post(io, [this] { ReadRegular(); });
      return;
    }
    if (n < 0) Log("folded source: reading " + options.path + ": " + strerror(errno));
    if (!options.follow || n < 0) {
      EndStream(*path_stream);
      std::lock_guard<std::mutex> lock(mu);
      stats.path_done = true;
      return;
    }
    struct stat st {};
    if (fstat(path_fd, &st) == 0 && st.st_size < path_offset) {
      Log("folded source: " + options.path + " shrank; reading it again from the start");
      path_stream->partial.clear();
      path_offset = 0;
    }
    poll_timer->expires_after(std::chrono::milliseconds(options.poll_ms));
    poll_timer->async_wait([this](const boost::system::error_code& ec) {
      if (!ec) ReadRegular();
    });
  }

  void ReadPipe() {
    path_pipe->async_read_some(
        asio::buffer(path_buf), [this](const boost::system::error_code& ec, size_t n) {
          if (ec == asio::error::operation_aborted) return;
          if (n > 0) Feed(*path_stream, std::string_view(path_buf.data(), n));
          if (ec) {
            EndStream(*path_stream);
            if (ec != asio::error::eof) {
              Log("folded source: reading " + options.path + ": " + ec.message());
            }
            std::lock_guard<std::mutex> lock(mu);
            stats.path_done = true;
            return;
          }
          ReadPipe();
        });
  }

  Status OpenPath() {
    const std::string& p = options.path;
    int fd;
    if (p == "-") {
      fd = dup(0);
    } else {
      struct stat st {};
      if (stat(p.c_str(), &st) != 0) {
        return Status::IOError("folded source: cannot open " + p + ": " + strerror(errno));
      }
      // A FIFO is opened read-write: open does not wait for a writer and reads never see EOF.
      fd = open(p.c_str(), (S_ISFIFO(st.st_mode) ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    }
    if (fd < 0) {
      return Status::IOError("folded source: cannot open " + p + ": " + strerror(errno));
    }
    struct stat st {};
    fstat(fd, &st);
    path_stream.emplace(p == "-" ? "standard input" : "file " + p, options);
    if (S_ISREG(st.st_mode)) {
      path_regular = true;
      path_fd = fd;
      poll_timer.emplace(io);
      asio::post(io, [this] { ReadRegular(); });
    } else {
      path_pipe.emplace(io);
      boost::system::error_code ec;
      path_pipe->assign(fd, ec);
      if (ec) {
        close(fd);
        path_pipe.reset();
        return Status::IOError("folded source: cannot read " + p + ": " + ec.message());
      }
      ReadPipe();
    }
    return Status::Ok();
  }

  Status OpenSocket() {
    struct stat st {};
    if (lstat(options.socket.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        return Status::InvalidArgument("folded socket " + options.socket +
                                       " exists and is not a socket; not replacing it");
      }
      unlink(options.socket.c_str());
    }
    boost::system::error_code ec;
    acceptor.emplace(io);
    acceptor->open(stream_protocol(), ec);
    if (!ec) acceptor->bind(stream_protocol::endpoint(options.socket), ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      acceptor.reset();
      return Status::IOError("folded source: cannot listen on " + options.socket + ": " +
                             ec.message());
    }
    Accept();
    return Status::Ok();
  }
};

FoldedSource::FoldedSource(FoldedSourceOptions options, StackSink sink)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(sink))) {}

FoldedSource::~FoldedSource() { Stop(); }

Status FoldedSource::Start() {
  Impl& m = *impl_;
  if (m.started) return Status::InvalidArgument("folded source already started");
  if (Status s = ValidateFoldedSourceOptions(m.options); !s.ok()) return s;
  if (!m.options.socket.empty()) {
    if (Status s = m.OpenSocket(); !s.ok()) return s;
  }
  if (!m.options.path.empty()) {
    if (Status s = m.OpenPath(); !s.ok()) {
      if (m.acceptor) {
        m.acceptor->close();
        unlink(m.options.socket.c_str());
      }
      return s;
    }
  }
  m.started = true;
  // A handler that throws unwinds io.run: logged, counted, and the loop runs on for the others.
  m.thread = std::thread([&m] {
    auto guard = asio::make_work_guard(m.io);
    while (!CatchAtBoundary("folded stacks", &m.thread_failures, [&m] { m.io.run(); })) {
    }
  });
  return Status::Ok();
}

void FoldedSource::Stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.io.stop();
  m.thread.join();
  if (m.acceptor) {
    boost::system::error_code ec;
    m.acceptor->close(ec);
    unlink(m.options.socket.c_str());
  }
  m.clients.clear();
  m.path_pipe.reset();
  if (m.path_fd >= 0) close(m.path_fd);
  m.path_fd = -1;
}

FoldedSourceStats FoldedSource::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  FoldedSourceStats s = impl_->stats;
  s.thread_failures = impl_->thread_failures.load(std::memory_order_relaxed);
  return s;
}

}  // namespace trailmap
