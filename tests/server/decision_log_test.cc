#include "server/src/decision_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace utilityd::server {
namespace {

using ::utilityd::testing::StatusIs;

v1::DecisionLogEntry Entry(int i) {
  v1::DecisionLogEntry e;
  e.set_decision_id(std::to_string(i));
  e.set_agent_id("agent-with-a-longish-name-" + std::to_string(i));
  e.set_action("recharge");
  return e;
}

TEST(DecisionLogTest, AFullQueueDropsAndCountsInsteadOfBlocking) {
  // A pipe nobody reads: the writer blocks once the pipe buffer is full,
  // so the queue fills and further entries must be dropped, not waited on.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  FILE* write_end = ::fdopen(fds[1], "w");
  prometheus::Counter written, dropped;
  constexpr int kOffered = 200000;
  std::string text;
  {
    auto log = std::make_unique<DecisionLog>(
        write_end, true, DecisionLog::Options{.queue_capacity = 100}, &written,
        &dropped);
    for (int i = 0; i < kOffered; ++i) log->Offer(Entry(i));  // must return
    EXPECT_GT(dropped.Value(), 0);
    // Read the pipe back so the writer can finish and the log can close.
    std::thread reader([fd = fds[0], &text] {
      char buf[65536];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof(buf))) > 0) text.append(buf, n);
    });
    log.reset();  // closes the write end: the reader sees end of file
    reader.join();
    ::close(fds[0]);  // only once the reader is done with it
  }
  EXPECT_EQ(written.Value() + dropped.Value(), kOffered);
  // What was counted written is in the pipe: one JSON line per entry, each
  // the entry offered, in the order offered.
  const std::vector<std::string> lines =
      absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(static_cast<int64_t>(lines.size()), written.Value());
  ASSERT_GT(lines.size(), 0u);
  int last = -1;
  for (const std::string& line : lines) {
    v1::DecisionLogEntry e;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &e).ok())
        << line;
    const int id = std::stoi(e.decision_id());
    EXPECT_GT(id, last);
    EXPECT_EQ(e.agent_id(), Entry(id).agent_id());
    EXPECT_EQ(e.action(), "recharge");
    last = id;
  }
}

TEST(DecisionLogTest, SamplesTheConfiguredFraction) {
  prometheus::Counter written, dropped;
  FILE* null = std::fopen("/dev/null", "w");
  DecisionLog log(null, true, {.sample = 0.25}, &written, &dropped);
  int sampled = 0;
  uint64_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // LCG ids
    sampled += log.Sampled(x);
  }
  EXPECT_NEAR(sampled / 100000.0, 0.25, 0.01);
  DecisionLog none(std::fopen("/dev/null", "w"), true, {.sample = 0}, &written,
                   &dropped);
  DecisionLog all(std::fopen("/dev/null", "w"), true, {.sample = 1}, &written,
                  &dropped);
  EXPECT_FALSE(none.Sampled(0));
  EXPECT_TRUE(all.Sampled(UINT64_MAX));
}

TEST(DecisionLogTest, RejectsBadOptions) {
  prometheus::Counter written, dropped;
  EXPECT_THAT(
      DecisionLog::Open({.sink = "stdout", .sample = 1.5}, &written, &dropped),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::HasSubstr("within 0..1")));
  EXPECT_THAT(
      DecisionLog::Open({.sink = "/nonexistent/dir/log"}, &written, &dropped),
      StatusIs(absl::StatusCode::kNotFound,
               ::testing::HasSubstr("cannot open")));
  auto off = DecisionLog::Open({.sink = "off"}, &written, &dropped);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(*off, nullptr);
}

}  // namespace
}  // namespace utilityd::server
