#include "server/src/http_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/src/memory_returner.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {

// A fixed pool of threads running queued jobs in order.
class HttpServer::Workers {
 public:
  explicit Workers(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { Run(); });
  }
  ~Workers() { Drain(); }
  // Queues a job; false once draining (the job is not run).
  bool Schedule(std::function<void()> job) {
    utilityd::MutexLock lock(&mu_);
    if (stopping_) return false;
    jobs_.push_back(std::move(job));
    return true;
  }
  // Refuses new jobs, runs the queued ones, and joins the threads.
  void Drain() {
    {
      utilityd::MutexLock lock(&mu_);
      stopping_ = true;
    }
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void Run() {
    while (true) {
      std::function<void()> job;
      {
        utilityd::MutexLock lock(&mu_);
        mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !jobs_.empty();
        });
        if (jobs_.empty()) return;  // stopping, and every job ran
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  utilityd::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// One request on a connection, from its headers to its answer.
struct HttpServer::Connection {
  enum class State { kReading, kRunning, kAnswered };
  State state = State::kReading;
  HttpRequest request;
  HttpResponse response;
  bool too_large = false;
  bool path_too_long = false;
};

namespace {

MHD_Result Queue(MHD_Connection* connection, const HttpResponse& r) {
  MHD_Response* response = MHD_create_response_from_buffer(
      r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, "Content-Type", r.content_type.c_str());
  for (const auto& [name, value] : r.headers) {
    MHD_add_response_header(response, name.c_str(), value.c_str());
  }
  const MHD_Result queued =
      MHD_queue_response(connection, static_cast<unsigned>(r.status), response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result CollectHeader(void* out, MHD_ValueKind, const char* key,
                         const char* value) {
  (*static_cast<std::map<std::string, std::string>*>(
      out))[absl::AsciiStrToLower(key)] = value != nullptr ? value : "";
  return MHD_YES;
}

MHD_Result CollectParam(void* out, MHD_ValueKind, const char* key,
                        const char* value) {
  (*static_cast<std::map<std::string, std::string>*>(out))[key] =
      value != nullptr ? value : "";
  return MHD_YES;
}

// A listening TCP socket on "host:port"; its bound port in `*port`.
absl::StatusOr<int> Listen(const std::string& address, int* port) {
  const size_t colon = address.rfind(':');
  int wanted = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &wanted) || wanted < 0 ||
      wanted > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_address: expected HOST:PORT, got \"", address, "\""));
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(wanted);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(),
                  &hints, &found) != 0 ||
      found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_address: cannot resolve \"", host, "\""));
  }
  const int fd =
      ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  // SO_REUSEADDR only: a restart may bind while old connections linger,
  // but no second process can share the port (no SO_REUSEPORT).
  int yes = 1;
  const bool bound =
      fd >= 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes)) == 0 &&
      ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::listen(fd, 1024) == 0;
  freeaddrinfo(found);
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (!bound ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("http_address: cannot listen on ", address));
  }
  *port = ntohs(local.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return fd;
}

}  // namespace

// libmicrohttpd calls Dispatch for a request's headers, for each piece of
// its body, and once more when the body is complete (and again after a
// suspended connection resumes): the request is answered on that last call.
struct MhdCallbacks {
  static MHD_Result Dispatch(void* self, MHD_Connection* connection,
                             const char* url, const char* method,
                             const char* /*version*/, const char* upload_data,
                             size_t* upload_size, void** context) {
    HttpServer& server = *static_cast<HttpServer*>(self);
    auto* c = static_cast<HttpServer::Connection*>(*context);
    if (c == nullptr) {  // the headers
      c = new HttpServer::Connection();
      c->request.method = method;
      // A path over the router's limit is answered 414 once the request is
      // in, unrouted; its body (if any) is read and dropped.
      if (std::strlen(url) > HttpRouter::kMaxPathBytes) {
        c->path_too_long = true;
        *context = c;
        return MHD_YES;
      }
      c->request.path = url;
      MHD_get_connection_values(connection, MHD_HEADER_KIND, &CollectHeader,
                                &c->request.headers);
      MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND,
                                &CollectParam, &c->request.params);
      *context = c;
      return MHD_YES;
    }
    if (*upload_size > 0) {  // a piece of the body
      if (c->path_too_long) {
        // dropped: the answer is 414 whatever the body
      } else if (c->request.body.size() + *upload_size >
                 server.options_.max_body_bytes) {
        c->too_large = true;
      } else {
        c->request.body.append(upload_data, *upload_size);
      }
      *upload_size = 0;
      return MHD_YES;
    }
    switch (c->state) {
      case HttpServer::Connection::State::kReading:
        return Start(server, connection, *c);
      case HttpServer::Connection::State::kAnswered:
        return Queue(connection, c->response);  // resumed after a worker
      case HttpServer::Connection::State::kRunning:
        return MHD_YES;
    }
    return MHD_NO;
  }

  // Routes a complete request: answers it here, or suspends the connection
  // and hands it to a worker.
  static MHD_Result Start(HttpServer& server, MHD_Connection* connection,
                          HttpServer::Connection& c) {
    if (c.too_large) {
      c.response.status = 413;
      c.response.Set(absl::StrCat("request body too large: the limit is ",
                                  server.options_.max_body_bytes,
                                  " bytes (--http_max_body_bytes)\n"),
                     "text/plain");
      return Queue(connection, c.response);
    }
    int status = 414;
    const HttpRouter::Entry* route =
        c.path_too_long ? nullptr : server.router_.Find(c.request, &status);
    if (route == nullptr) {
      HttpRouter::AnswerNoRoute(status, c.response);
      return Queue(connection, c.response);
    }
    if (route->lane == HttpServer::Lane::kEventThread) {
      route->handler(c.request, c.response);
      return Queue(connection, c.response);
    }
    // Suspended before the job may run: the job resumes it when done.
    c.state = HttpServer::Connection::State::kRunning;
    MHD_suspend_connection(connection);
    const bool scheduled = server.workers_->Schedule([route, connection, &c] {
      route->handler(c.request, c.response);
      MemoryReturner::Note(c.request.body.size() + c.response.body.size());
      c.state = HttpServer::Connection::State::kAnswered;
      MHD_resume_connection(connection);
    });
    if (!scheduled) {  // stopping
      c.response.status = 503;
      c.response.Set("shutting down\n", "text/plain");
      c.state = HttpServer::Connection::State::kAnswered;
      MHD_resume_connection(connection);
    }
    return MHD_YES;
  }

  static void Completed(void*, MHD_Connection*, void** context,
                        MHD_RequestTerminationCode) {
    delete static_cast<HttpServer::Connection*>(*context);
    *context = nullptr;
  }
};

HttpServer::HttpServer(Options options) : options_(options) {}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start(const std::string& address) {
  absl::StatusOr<int> fd = Listen(address, &port_);
  if (!fd.ok()) return fd.status();
  workers_ = std::make_unique<Workers>(options_.workers);
  daemon_ = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, nullptr,
      nullptr, &MhdCallbacks::Dispatch, this, MHD_OPTION_LISTEN_SOCKET, *fd,
      MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(options_.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      static_cast<unsigned>(options_.max_per_address),
      MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(
          std::max<int64_t>(1, absl::ToInt64Seconds(options_.idle_timeout))),
      MHD_OPTION_NOTIFY_COMPLETED, &MhdCallbacks::Completed, this,
      MHD_OPTION_END);
  if (daemon_ == nullptr) {
    ::close(*fd);
    workers_.reset();
    return absl::UnavailableError(
        absl::StrCat("http_address: cannot serve on ", address));
  }
  return absl::OkStatus();
}

void HttpServer::Stop() {
  // Workers first: each finishes its handler and resumes its connection,
  // so none is left suspended (or written by a worker) when the daemon
  // stops; requests arriving meanwhile get 503.
  if (workers_ != nullptr) workers_->Drain();
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace utilityd::server
