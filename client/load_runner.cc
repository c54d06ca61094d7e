// wayfinder-load's run (client/load_runner.h): sending, answering,
// measuring.

#include "client/load_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/client.h"

namespace wayfinder::load {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

}  // namespace

void OnSigint(int) { g_interrupted = 1; }

void Tally(const v1::FindPathResponse& r, EntryStats& s) { ++s.path_status[r.status()]; }
void Tally(const v1::FindPathsResponse& r, EntryStats& s) {
  for (const auto& result : r.results()) {
    if (result.has_error() && result.error().code() != 0) {
      ++s.query_errors[result.error().code()];
    } else {
      ++s.path_status[result.status()];
    }
  }
}
void Tally(const v1::SampleFlowFieldResponse&, EntryStats&) {}
void Tally(const v1::MapInfo&, EntryStats&) {}

std::vector<std::unique_ptr<Client>> OpenChannels(const client::ClientOptions& options,
                                                  int channels) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < channels; ++i) {
    grpc::ChannelArguments args = client::ChannelArgumentsFor(options);
    // Without this, channels with equal arguments share one connection.
    if (channels > 1) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto credentials =
        options.credentials ? options.credentials : grpc::InsecureChannelCredentials();
    clients.push_back(std::make_unique<Client>(
        grpc::CreateCustomChannel(options.target, credentials, args), options));
  }
  return clients;
}

Runner::Runner(const RunConfig& config, std::vector<std::unique_ptr<Client>>& clients,
               const std::string& token, const std::vector<Target>& targets,
               const std::vector<MixEntry>& mix)
    : config_(config),
      clients_(clients),
      token_(token),
      targets_(targets),
      mix_(mix),
      warmup_stats_(mix.size()),
      measured_stats_(mix.size()) {
  double total = 0;
  for (const MixEntry& e : mix_) {
    total += e.weight;
    cumulative_.push_back(total);
    std::vector<size_t> maps;
    for (size_t t = 0; t < targets_.size(); ++t) {
      if (e.map.empty() || e.map == targets_[t].name) maps.push_back(t);
    }
    entry_targets_.push_back(std::move(maps));
  }
}

void Runner::Run() {
  start_ = Clock::now();
  warmup_end_ = start_ + ToDuration(config_.warmup_s);
  end_ = config_.duration_s > 0 ? warmup_end_ + ToDuration(config_.duration_s)
                                : Clock::time_point::max();
  std::thread dispatcher;
  if (config_.rate > 0) {
    issuers_ = 1;
    dispatcher = std::thread([this] { OpenLoop(); });
  } else {
    issuers_ = config_.concurrency;
    for (int i = 0; i < config_.concurrency; ++i) {
      if (!Issue(Clock::now(), true)) IssuerDone();
    }
  }
  auto next_progress = start_ + std::chrono::seconds(1);
  uint64_t last_completed = 0;
  auto last_time = start_;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (issuers_ > 0 || outstanding_.load() > 0) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (g_interrupted && !stop_.load()) {
        stop_ = true;
        interrupted_ = true;
      }
      const auto now = Clock::now();
      if (config_.progress && now >= next_progress) {
        const uint64_t completed = completed_.load();
        const double rps = static_cast<double>(completed - last_completed) /
                           std::chrono::duration<double>(now - last_time).count();
        last_completed = completed;
        last_time = now;
        next_progress += std::chrono::seconds(1);
        if (next_progress < now) next_progress = now + std::chrono::seconds(1);
        const std::string line = ProgressLine(now, rps);
        lock.unlock();  // a slow terminal must not hold up the answers
        std::fprintf(stderr, "\r%s", line.c_str());
        std::fflush(stderr);
        lock.lock();
      }
    }
  }
  if (dispatcher.joinable()) dispatcher.join();
  if (config_.progress) std::fprintf(stderr, "\r%*s\r", static_cast<int>(progress_width_), "");
}

Clock::duration Runner::ToDuration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void Runner::OpenLoop() {
  Rng gaps(config_.seed, ~uint64_t{0});
  const double mean_gap = 1.0 / config_.rate;
  Clock::time_point next = start_;
  int64_t lag_max = 0;
  while (true) {
    const auto now = Clock::now();
    if (next > now) {
      std::this_thread::sleep_until(std::min(next, now + std::chrono::milliseconds(20)));
      if (stop_.load()) break;
      continue;
    }
    if (outstanding_.load() >= config_.max_outstanding) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (stop_.load()) break;
      continue;
    }
    if (next >= warmup_end_) {
      lag_max = std::max<int64_t>(
          lag_max, std::chrono::duration_cast<std::chrono::nanoseconds>(now - next).count());
    }
    if (!Issue(next, false)) break;
    const double gap = config_.poisson ? -std::log(1 - gaps.Unit()) * mean_gap : mean_gap;
    next += ToDuration(gap);
  }
  send_lag_max_ns_ = static_cast<double>(lag_max);
  IssuerDone();
}

void Runner::IssuerDone() {
  std::lock_guard<std::mutex> lock(mu_);
  --issuers_;
  cv_.notify_all();
}

bool Runner::Issue(Clock::time_point t0, bool slot) {
  if (stop_.load() || t0 >= end_) return false;
  const bool measured = t0 >= warmup_end_;
  if (measured && config_.requests > 0 && measured_issued_.fetch_add(1) >= config_.requests) {
    return false;
  }
  const uint64_t n = sequence_.fetch_add(1);
  Rng rng(config_.seed, n);
  // The entry whose share of [0, total weight) holds the draw (never one
  // of weight 0).
  const size_t entry =
      std::min(mix_.size() - 1,
               static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(),
                                                    rng.Unit() * cumulative_.back()) -
                                   cumulative_.begin()));
  const MixEntry& e = mix_[entry];
  const std::vector<size_t>& maps = entry_targets_[entry];
  const Target& t = targets_[maps[rng.Below(maps.size())]];
  v1::Pathfinder::Stub& stub = clients_[n % clients_.size()]->stub();

  auto prepare = [&](CallBase* c) {
    c->t0 = t0;
    c->entry = entry;
    c->measured = measured;
    c->slot = slot;
    c->ctx.set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(config_.timeout_s)));
    if (!token_.empty()) c->ctx.AddMetadata("authorization", absl::StrCat("Bearer ", token_));
    outstanding_.fetch_add(1);
  };
  switch (e.kind) {
    case MixEntry::Kind::kFindPath: {
      auto* c = new Call<v1::FindPathRequest, v1::FindPathResponse>;
      FillPath(e, t, rng, &c->request);
      prepare(c);
      stub.async()->FindPath(&c->ctx, &c->request, &c->response,
                             [this, c](grpc::Status s) { Done(c, s); });
      break;
    }
    case MixEntry::Kind::kBatch: {
      auto* c = new Call<v1::FindPathsRequest, v1::FindPathsResponse>;
      FillBatch(e, t, rng, &c->request);
      prepare(c);
      stub.async()->FindPaths(&c->ctx, &c->request, &c->response,
                              [this, c](grpc::Status s) { Done(c, s); });
      break;
    }
    case MixEntry::Kind::kSample: {
      auto* c = new Call<v1::SampleFlowFieldRequest, v1::SampleFlowFieldResponse>;
      FillSample(e, t, config_.seed, rng, &c->request);
      prepare(c);
      stub.async()->SampleFlowField(&c->ctx, &c->request, &c->response,
                                    [this, c](grpc::Status s) { Done(c, s); });
      break;
    }
    case MixEntry::Kind::kGetMap: {
      auto* c = new Call<v1::GetMapRequest, v1::MapInfo>;
      c->request.set_name(t.name);
      prepare(c);
      stub.async()->GetMap(&c->ctx, &c->request, &c->response,
                           [this, c](grpc::Status s) { Done(c, s); });
      break;
    }
  }
  return true;
}

void Runner::Done(CallBase* call, const grpc::Status& status) {
  const auto now = Clock::now();
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now - call->t0);
  const bool slot = call->slot;
  completed_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EntryStats& stats = (call->measured ? measured_stats_ : warmup_stats_)[call->entry];
    stats.latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, nanos.count())));
    if (status.ok()) {
      ++stats.ok;
      call->Tally(stats);
    } else {
      ++stats.errors[status.error_code()];
    }
    if (call->measured && now > last_completion_) last_completion_ = now;
  }
  // The call is freed while it still counts as outstanding: once nothing
  // is outstanding and no issuer is left, Run returns and main tears down
  // the channels and exits, which must not overlap with this thread
  // freeing the call's gRPC state (it did, rarely: a "double free" as a
  // run ended).
  delete call;
  if (slot) {
    // A closed-loop slot is still an issuer here, so the run cannot look
    // finished before it has sent its next request or given up.
    outstanding_.fetch_sub(1);
    if (!Issue(now, true)) IssuerDone();
    return;
  }
  // Under the lock, so that Run cannot see the end (and this runner be
  // destroyed) before the notification is done.
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_.fetch_sub(1) == 1) cv_.notify_all();
}

std::string Runner::ProgressLine(Clock::time_point now, double rps) {  // mu_ held
  const bool warming = now < warmup_end_;
  EntryStats all;
  for (const EntryStats& s : warming ? warmup_stats_ : measured_stats_) all.Merge(s);
  const double t = std::chrono::duration<double>(now - (warming ? start_ : warmup_end_)).count();
  std::string line =
      absl::StrFormat("%s %6.1f s  %9.1f req/s  %9d requests  %d errors  p99 %s  in flight %d",
                      warming ? "warm-up" : "measure", t, rps, all.requests(), all.error_count(),
                      FormatMicros(all.latency.Percentile(99) / 1e3), outstanding_.load());
  if (line.size() < progress_width_) line.append(progress_width_ - line.size(), ' ');
  progress_width_ = line.size();
  return line;
}

std::string Runner::FormatMicros(double us) {
  if (us < 1000) return absl::StrFormat("%.1f us", us);
  if (us < 1e6) return absl::StrFormat("%.2f ms", us / 1e3);
  return absl::StrFormat("%.3f s", us / 1e6);
}

}  // namespace wayfinder::load
