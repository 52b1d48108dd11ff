// The USB link's throughput over tvsim's pseudo-terminal (tvsim --pty), at the pty's own speed and at
// emulated link rates (tvsim --link-rate): pulling a card of 100 photos of 240x240 (about 0.5 MB of
// JPEGs) and pushing a 0.5 MB model. Prints payload throughput, round trips, and the share of the time
// the link carries no payload (for the push: the time the PC's window was full, waiting for acks).
//   tv_bench_link [RATE ...]      rates in bytes per second (0 = the pty's speed); default 0 1000000 500000
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host/base/files.h"
#include "host/link/link.h"
#include "host/link/link_pull.h"
#include "host/photos/jpeg.h"
#include "tv/link/link_frame.h"
#include "tv/rng.h"

namespace fs = std::filesystem;

namespace {

// 100 photos of 240x240: smooth colour fields with some texture (about 5 KB each at quality 80).
uint64_t make_card(const std::string& card) {
  uint64_t total = 0;
  tv::Rng rng(7);
  std::vector<uint8_t> px(240 * 240 * 3);
  for (int i = 0; i < 100; ++i) {
    const std::string dir = card + "/images/" + (i % 2 ? "1cup" : "0blank");
    fs::create_directories(dir);
    for (int y = 0; y < 240; ++y)
      for (int x = 0; x < 240; ++x)
        for (int c = 0; c < 3; ++c)
          px[(y * 240 + x) * 3 + c] = (uint8_t)(((x + i * 7) * (c + 1) + y * (3 - c)) / 3 + (int)rng.below(3));
    const std::vector<uint8_t> jpg = tvh::encode_jpeg(px.data(), 240, 240, 3, 70);
    tvh::write_file_atomic(dir + "/img_" + std::to_string(i) + ".jpg", jpg);
    total += jpg.size();
  }
  return total;
}

struct Board {
  pid_t pid = -1;
  std::string port;
  Board(const std::string& tvsim, const std::string& card, long long rate, const std::string& dir) {
    const std::string out = dir + "/tvsim.out";
    const std::string cmd = "exec '" + tvsim + "' --pty --sd '" + card + "' --link-rate " + std::to_string(rate) +
                            " >'" + out + "' 2>/dev/null </dev/null";
    pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), (char*)nullptr);
      _exit(127);
    }
    for (int i = 0; i < 1000 && port.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      FILE* f = std::fopen(out.c_str(), "r");
      char line[256];
      if (f && std::fgets(line, sizeof line, f) && std::string(line).back() == '\n')
        port = std::string(line, std::string(line).size() - 1);
      if (f) std::fclose(f);
    }
  }
  ~Board() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long long> rates;
  for (int i = 1; i < argc; ++i) rates.push_back(std::atoll(argv[i]));
  if (rates.empty()) rates = {0, 1000000, 500000};
  const std::string tvsim = std::string(TV_BIN_DIR) + "/tvsim";
  const std::string dir = fs::temp_directory_path().string() + "/tv_bench_link." + std::to_string(getpid());
  fs::create_directories(dir);
  const uint64_t card_bytes = make_card(dir + "/card");
  std::vector<uint8_t> model(500000);
  tv::Rng rng(3);
  for (uint8_t& b : model) b = (uint8_t)rng.next();
  std::printf("card: 100 photos of 240x240, %llu bytes; model: %zu bytes; frames of %zu payload bytes, window %u\n",
              (unsigned long long)card_bytes, model.size(), tv::link::kMaxPayload, (unsigned)tv::link::kWindow);
  std::printf("%-12s | %-44s | %-44s\n", "link rate", "pull 100 photos", "push 0.5 MB");
  for (long long rate : rates) {
    Board board(tvsim, dir + "/card", rate, dir);
    if (board.port.empty()) {
      std::fprintf(stderr, "tv_bench_link: %s --pty did not start\n", tvsim.c_str());
      return 1;
    }
    const std::string dest = dir + "/pulled-" + std::to_string(rate);
    std::unique_ptr<tvh::SerialPort> port = tvh::open_serial(board.port);
    tvh::LinkClient link(*port);
    const double t0 = now_s();
    const tvh::PullReport r = tvh::pull_photos(link, dest, nullptr);
    const double pull_s = now_s() - t0;
    const uint64_t pull_requests = link.stats().requests;
    const double pull_busy = rate > 0 ? (double)r.bytes / (double)rate / pull_s : 0;
    const tvh::LinkStats before = link.stats();
    try {
      link.push(model);
    } catch (const tvh::BoardRefused& e) {  // random bytes: refused after the transfer, which is what is timed
      if (std::string(e.what()).find("bad magic") == std::string::npos) std::fprintf(stderr, "push: %s\n", e.what());
    }
    link.bye();
    const tvh::LinkStats& after = link.stats();
    const double push_s = after.seconds - before.seconds;
    const double waiting = after.waiting_seconds - before.waiting_seconds;
    char pull_txt[96], push_txt[96];
    std::snprintf(pull_txt, sizeof pull_txt, "%.2f s, %.0f KB/s, %llu round trips, link busy %.0f%%", pull_s,
                  (double)r.bytes / 1000.0 / pull_s, (unsigned long long)pull_requests, 100.0 * pull_busy);
    std::snprintf(push_txt, sizeof push_txt, "%.2f s, %.0f KB/s, window full %.0f%% of it, %llu resends", push_s,
                  (double)model.size() / 1000.0 / push_s, 100.0 * waiting / push_s,
                  (unsigned long long)(after.resends - before.resends));
    std::printf("%-12s | %-44s | %-44s\n", rate ? std::to_string(rate).c_str() : "pty", pull_txt, push_txt);
  }
  fs::remove_all(dir);
  return 0;
}
