#include "server/metrics.h"

#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/live_map.h"
#include "server/map_snapshot.h"
#include "server/pathfinder_service.h"
#include "server/worker_pool.h"
#include "wayfinder/v1/wayfinder.grpc.pb.h"

namespace wayfinder::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// grpc::StatusCode values are 0..16.
constexpr int kNumCodes = 17;
constexpr std::array<const char*, kNumCodes> kCodeNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

// Request latency: 50 us (a cached lookup) to 10 s (a large build).
const prometheus::Histogram::BucketBoundaries kRequestBuckets = {
    50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
    50e-3, 100e-3, 250e-3, 500e-3, 1,    2.5,    5,    10};
// Graph build time: 1 ms to 2 min.
const prometheus::Histogram::BucketBoundaries kBuildBuckets = {
    1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3,
    500e-3, 1, 2.5, 5, 10, 30, 60, 120};

// Services other than Pathfinder whose methods get their own label.
constexpr std::array<const char*, 3> kOtherMethods = {
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
};

// The per-RPC series of one method label.
struct MethodMetrics {
  std::string label;
  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Histogram* duration = nullptr;
  prometheus::Gauge* in_flight = nullptr;
  // requests{method=label, code} by code, added on first use.
  mutable std::array<std::atomic<prometheus::Counter*>, kNumCodes> by_code{};

  prometheus::Counter& Requests(grpc::StatusCode code) const {
    int i = static_cast<int>(code);
    if (i < 0 || i >= kNumCodes) i = static_cast<int>(grpc::StatusCode::UNKNOWN);
    prometheus::Counter* c = by_code[i].load(std::memory_order_acquire);
    if (c == nullptr) {
      // Family::Add is thread-safe and returns the existing series for the
      // same labels, so racing first calls agree.
      c = &requests->Add({{"method", label}, {"code", kCodeNames[i]}});
      by_code[i].store(c, std::memory_order_release);
    }
    return *c;
  }
};

}  // namespace

struct Metrics::Recorded {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("wayfinder_requests_total")
          .Help("RPCs answered, by method and status code")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& durations =
      prometheus::BuildHistogram()
          .Name("wayfinder_request_duration_seconds")
          .Help("RPC latency from arrival to status sent, seconds")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& in_flight =
      prometheus::BuildGauge()
          .Name("wayfinder_requests_in_flight")
          .Help("RPCs received and not yet answered")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& builds =
      prometheus::BuildHistogram()
          .Name("wayfinder_map_build_seconds")
          .Help("Build time of each graph of each committed map, seconds")
          .Register(*registry);

  // By full method path ("/wayfinder.v1.Pathfinder/FindPath"). Filled in
  // the constructor, read-only after.
  absl::flat_hash_map<std::string, std::unique_ptr<MethodMetrics>> methods;
  std::unique_ptr<MethodMetrics> other;

  Recorded() {
    const google::protobuf::ServiceDescriptor* pathfinder =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            v1::Pathfinder::service_full_name());
    for (int i = 0; pathfinder != nullptr && i < pathfinder->method_count(); ++i) {
      const std::string& name = pathfinder->method(i)->name();
      methods[absl::StrCat("/", pathfinder->full_name(), "/", name)] = NewMethod(name);
    }
    for (const char* path : kOtherMethods) methods[path] = NewMethod(path + 1);
    other = NewMethod("other");
    for (int k = 0; k < v1::GraphKind_descriptor()->value_count(); ++k) {
      const google::protobuf::EnumValueDescriptor* kind = v1::GraphKind_descriptor()->value(k);
      if (kind->number() != v1::GRAPH_KIND_UNSPECIFIED) {
        builds.Add({{"graph", kind->name()}}, kBuildBuckets);
      }
    }
  }

  std::unique_ptr<MethodMetrics> NewMethod(const std::string& label) {
    auto m = std::make_unique<MethodMetrics>();
    m->label = label;
    m->requests = &requests;
    m->duration = &durations.Add({{"method", label}}, kRequestBuckets);
    m->in_flight = &in_flight.Add({{"method", label}});
    return m;
  }

  const MethodMetrics& Find(const char* path) const {
    if (path == nullptr) return *other;
    auto it = methods.find(absl::string_view(path));
    return it == methods.end() ? *other : *it->second;
  }
};

namespace {

// One call's interceptor: counts the call in flight from its creation (when
// the call arrives) until its status is sent, then records code and
// latency. Records are made before the status leaves, so a client that has
// its answer sees it counted.
class RequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RequestInterceptor(const MethodMetrics* method)
      : method_(method), start_(std::chrono::steady_clock::now()) {
    method_->in_flight->Increment();
  }
  // A call torn down without a status sent (cancelled before its handler
  // answered) counts as CANCELLED.
  ~RequestInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (!recorded_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    method_->Requests(code).Increment();
    method_->duration->Observe(elapsed.count());
    method_->in_flight->Decrement();
  }

  const MethodMetrics* const method_;
  const std::chrono::steady_clock::time_point start_;
  bool recorded_ = false;
};

class InterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit InterceptorFactory(std::shared_ptr<const Metrics::Recorded> recorded)
      : recorded_(std::move(recorded)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RequestInterceptor(&recorded_->Find(info->method()));
  }

 private:
  // Keeps the series alive for as long as the gRPC server holds the factory.
  const std::shared_ptr<const Metrics::Recorded> recorded_;
};

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

prometheus::MetricFamily Gauge(std::string name, std::string help, double value) {
  prometheus::MetricFamily f =
      Family(std::move(name), std::move(help), prometheus::MetricType::Gauge);
  f.metric.emplace_back().gauge.value = value;
  return f;
}

prometheus::MetricFamily Counter(std::string name, std::string help, double value) {
  prometheus::MetricFamily f =
      Family(std::move(name), std::move(help), prometheus::MetricType::Counter);
  f.metric.emplace_back().counter.value = value;
  return f;
}

// The pool's queue-wait distribution as a Prometheus histogram.
prometheus::MetricFamily QueueWait(const WorkerPool::WaitHistogram& h) {
  prometheus::MetricFamily f =
      Family("wayfinder_queue_wait_seconds",
             "Time calls waited for a worker before one picked them up (run or refused), "
             "seconds",
             prometheus::MetricType::Histogram);
  prometheus::ClientMetric::Histogram& out = f.metric.emplace_back().histogram;
  out.sample_count = h.count;
  out.sample_sum = h.sum_seconds;
  for (size_t i = 0; i < WorkerPool::kWaitBuckets.size(); ++i) {
    out.bucket.push_back({h.cumulative[i], WorkerPool::kWaitBuckets[i]});
  }
  out.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
  return f;
}

prometheus::MetricFamily UpdateOutcomes(const UpdateStats::Snapshot& u) {
  prometheus::MetricFamily f = Family("wayfinder_map_updates_total",
                                      "UpdateMap calls that reached a worker, by outcome",
                                      prometheus::MetricType::Counter);
  for (int i = 0; i < UpdateStats::kOutcomes; ++i) {
    prometheus::ClientMetric& m = f.metric.emplace_back();
    m.label.push_back({"outcome", UpdateStats::OutcomeName(i)});
    m.counter.value = static_cast<double>(u.outcomes[i]);
  }
  return f;
}

prometheus::MetricFamily UpdateLatency(const UpdateStats::Snapshot& u) {
  prometheus::MetricFamily f =
      Family("wayfinder_map_update_seconds",
             "Successful UpdateMap batches: validation, repair, storage and publication, seconds",
             prometheus::MetricType::Histogram);
  prometheus::ClientMetric::Histogram& out = f.metric.emplace_back().histogram;
  const uint64_t count = u.buckets.back();
  out.sample_count = count;
  out.sample_sum = u.sum_seconds;
  for (size_t i = 0; i < UpdateStats::kBuckets.size(); ++i) {
    out.bucket.push_back({u.buckets[i], UpdateStats::kBuckets[i]});
  }
  out.bucket.push_back({count, std::numeric_limits<double>::infinity()});
  return f;
}

// The store and the follower (replication), read at scrape time.
void AppendReplication(const Metrics::Sources& sources,
                       std::vector<prometheus::MetricFamily>& out) {
  if (sources.store != nullptr) {
    out.push_back(Gauge("wayfinder_store_reachable",
                        "1 when the last operation on the map store reached it, else 0",
                        sources.store->reachable() ? 1 : 0));
  }
  const Follower* follower = sources.follower;
  if (follower == nullptr || !follower->following()) return;
  const Follower::Stats s = follower->stats();
  out.push_back(Counter("wayfinder_replication_notifications_total",
                        "Change notifications received from the map store (LISTEN/NOTIFY)",
                        static_cast<double>(s.notifications)));
  prometheus::MetricFamily catch_ups =
      Family("wayfinder_replication_catch_ups_total",
             "Catch-ups: kind=poll for change feed reads without a notification that found "
             "changes, kind=on_demand for maps fetched at once for a query's min_version or "
             "a write made while behind",
             prometheus::MetricType::Counter);
  for (const auto& [kind, value] : {std::pair<const char*, uint64_t>{"poll", s.polls_with_changes},
                                    std::pair<const char*, uint64_t>{"on_demand", s.on_demand}}) {
    prometheus::ClientMetric& m = catch_ups.metric.emplace_back();
    m.label.push_back({"kind", kind});
    m.counter.value = static_cast<double>(value);
  }
  out.push_back(std::move(catch_ups));
  prometheus::MetricFamily applied =
      Family("wayfinder_replication_applied_total",
             "Remote changes applied: kind=batch for logged edit batches applied "
             "incrementally, kind=whole for maps loaded and built whole, kind=delete",
             prometheus::MetricType::Counter);
  for (const auto& [kind, value] : {std::pair<const char*, uint64_t>{"batch", s.batches},
                                    std::pair<const char*, uint64_t>{"whole", s.whole_loads},
                                    std::pair<const char*, uint64_t>{"delete", s.deletes}}) {
    prometheus::ClientMetric& m = applied.metric.emplace_back();
    m.label.push_back({"kind", kind});
    m.counter.value = static_cast<double>(value);
  }
  out.push_back(std::move(applied));
  out.push_back(Counter("wayfinder_replication_errors_total",
                        "Failed map store reads and syncs of the follower (retried)",
                        static_cast<double>(s.errors)));
  const std::vector<Follower::Lag> lag = follower->lag();
  uint64_t max_versions = 0;
  double max_seconds = 0;
  prometheus::MetricFamily versions =
      Family("wayfinder_replication_lag_versions",
             "Versions this replica is behind the map store, per map", prometheus::MetricType::Gauge);
  prometheus::MetricFamily seconds = Family(
      "wayfinder_replication_lag_seconds",
      "Seconds since the change feed showed a version this replica does not have yet, per map",
      prometheus::MetricType::Gauge);
  for (const Follower::Lag& l : lag) {
    max_versions = std::max(max_versions, l.versions);
    max_seconds = std::max(max_seconds, l.seconds);
    prometheus::ClientMetric& v = versions.metric.emplace_back();
    v.label.push_back({"map", l.name});
    v.gauge.value = static_cast<double>(l.versions);
    prometheus::ClientMetric& t = seconds.metric.emplace_back();
    t.label.push_back({"map", l.name});
    t.gauge.value = l.seconds;
  }
  out.push_back(Gauge("wayfinder_replication_max_lag_versions",
                      "Versions this replica is behind the map store, the most of any map",
                      static_cast<double>(max_versions)));
  out.push_back(Gauge("wayfinder_replication_max_lag_seconds",
                      "wayfinder_replication_lag_seconds, the most of any map", max_seconds));
  if (sources.map_names) {
    out.push_back(std::move(versions));
    out.push_back(std::move(seconds));
  }
}

// Reads the server's state when scraped.
class ServerCollector final : public prometheus::Collectable {
 public:
  explicit ServerCollector(const Metrics::Sources& sources) : sources_(sources) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    if (const WorkerPool* pool = sources_.pool; pool != nullptr) {
      out.push_back(Gauge("wayfinder_worker_queue_depth",
                          "Tasks waiting for a worker thread",
                          static_cast<double>(pool->queue_depth())));
      out.push_back(Gauge("wayfinder_worker_queue_capacity",
                          "Tasks allowed to wait (--max_queue)",
                          static_cast<double>(pool->max_queue())));
      out.push_back(Gauge("wayfinder_workers", "Worker threads",
                          static_cast<double>(sources_.workers)));
      out.push_back(Counter("wayfinder_rejected_requests_total",
                            "Requests refused because the worker queue was full "
                            "(answered RESOURCE_EXHAUSTED)",
                            static_cast<double>(pool->rejected())));
      out.push_back(QueueWait(pool->wait_histogram()));
      prometheus::MetricFamily refused =
          Family("wayfinder_queue_wait_refused_total",
                 "Calls refused (RESOURCE_EXHAUSTED) for waiting longer than --max_queue_wait: "
                 "stage=admission when the expected wait was too long, stage=dequeue when "
                 "the call had waited too long by the time a worker picked it up, "
                 "stage=inline when a FindPath found gRPC's callback threads running later",
                 prometheus::MetricType::Counter);
      const uint64_t inline_late =
          sources_.service != nullptr ? sources_.service->late_refusals() : 0;
      for (const auto& [stage, value] :
           {std::pair<const char*, uint64_t>{"admission", pool->refused_wait()},
            std::pair<const char*, uint64_t>{"dequeue", pool->expired()},
            std::pair<const char*, uint64_t>{"inline", inline_late}}) {
        prometheus::ClientMetric& m = refused.metric.emplace_back();
        m.label.push_back({"stage", stage});
        m.counter.value = static_cast<double>(value);
      }
      out.push_back(std::move(refused));
    }
    if (const MapRegistry* registry = sources_.registry; registry != nullptr) {
      const std::vector<std::shared_ptr<const MapSnapshot>> maps = registry->List();
      out.push_back(Gauge("wayfinder_maps", "Maps held", static_cast<double>(maps.size())));
      prometheus::MetricFamily per_map =
          Family("wayfinder_map_memory_bytes", "Approximate memory of each map, bytes",
                 prometheus::MetricType::Gauge);
      double total = 0;
      for (const auto& map : maps) {
        prometheus::ClientMetric& m = per_map.metric.emplace_back();
        m.label.push_back({"map", map->name});
        m.gauge.value = static_cast<double>(map->info.memory_bytes());
        total += m.gauge.value;
      }
      out.push_back(Gauge("wayfinder_maps_memory_bytes",
                          "Approximate memory of all maps together, bytes", total));
      // Living maps' Left-Right bodies (server/live_map.h): two per edited
      // map; a third exists only while a long query pins an old one. Copies
      // (an edit found every body pinned) cost a map-sized allocation each.
      double bodies = 0, copies = 0, reuses = 0, waits = 0;
      for (const auto& map : maps) {
        if (map->live == nullptr) continue;
        bodies += static_cast<double>(map->live->bodies());
        copies += static_cast<double>(map->live->copies());
        reuses += static_cast<double>(map->live->reuses());
        waits += static_cast<double>(map->live->waits());
      }
      out.push_back(Gauge("wayfinder_map_bodies",
                          "Copies of the maps' graphs held for edits (Left-Right bodies), all maps",
                          bodies));
      out.push_back(Counter("wayfinder_map_body_copies_total",
                            "Edits that copied a whole map body because queries pinned every one",
                            copies));
      out.push_back(Counter("wayfinder_map_body_reuses_total",
                            "Edits applied to a spare body instead of a copy", reuses));
      out.push_back(Counter("wayfinder_map_body_waits_total",
                            "Edits that waited briefly for a query to release a body", waits));
      // /metrics has no authentication: the per-map series, which name
      // every map, only when the operator lets them out.
      if (sources_.map_names) out.push_back(std::move(per_map));
    }
    if (const PathfinderService* service = sources_.service; service != nullptr) {
      const FlowFieldCache::Stats s = service->flow_cache_stats();
      out.push_back(Counter("wayfinder_flow_cache_hits_total",
                            "Flow fields answered from the cache", static_cast<double>(s.hits)));
      out.push_back(Counter("wayfinder_flow_cache_misses_total", "Flow fields computed",
                            static_cast<double>(s.misses)));
      out.push_back(Counter("wayfinder_flow_cache_coalesced_total",
                            "Flow field requests that waited for another request's "
                            "computation",
                            static_cast<double>(s.coalesced)));
      out.push_back(Counter("wayfinder_flow_cache_evictions_total",
                            "Flow fields dropped to stay within the cache's memory",
                            static_cast<double>(s.evictions)));
      out.push_back(Counter("wayfinder_flow_cache_repairs_total",
                            "Cached flow fields repaired for the next version after an "
                            "UpdateMap (instead of computed afresh)",
                            static_cast<double>(s.repairs)));
      out.push_back(Counter("wayfinder_flow_cache_repair_failures_total",
                            "Flow field repairs that failed and were computed afresh",
                            static_cast<double>(s.repair_failures)));
      out.push_back(Gauge("wayfinder_flow_cache_entries", "Flow fields cached",
                          static_cast<double>(s.entries)));
      out.push_back(Gauge("wayfinder_flow_cache_bytes", "Memory of the cached flow fields, bytes",
                          static_cast<double>(s.bytes)));
      out.push_back(Gauge("wayfinder_flow_idle_memory_bytes",
                          "Flow-field scratch and spare field arrays kept for the next "
                          "computation, bytes (at most half the cache's capacity)",
                          static_cast<double>(s.memory.idle_bytes)));
      out.push_back(Counter("wayfinder_flow_memory_reused_total",
                            "Flow-field computations given a spare field's arrays instead of "
                            "new ones",
                            static_cast<double>(s.memory.arrays_reused)));
      out.push_back(UpdateOutcomes(service->update_stats()));
      out.push_back(UpdateLatency(service->update_stats()));
      const WatchHub::Stats w = service->watch_stats();
      out.push_back(Gauge("wayfinder_watchers", "WatchMaps streams open",
                          static_cast<double>(w.watchers)));
      out.push_back(Counter("wayfinder_watch_events_sent_total",
                            "MapEvents written to WatchMaps streams",
                            static_cast<double>(w.events_sent)));
      out.push_back(Counter("wayfinder_watchers_lagged_total",
                            "WatchMaps streams ended with RESOURCE_EXHAUSTED for falling more "
                            "than --max_watch_queue events behind",
                            static_cast<double>(w.lagged)));
      out.push_back(Gauge("wayfinder_watch_queued_events",
                          "MapEvents waiting in WatchMaps streams' queues",
                          static_cast<double>(w.queued)));
    }
    AppendReplication(sources_, out);
    return out;
  }

 private:
  const Metrics::Sources sources_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Start(const std::string& listen,
                                                        const Sources& sources) {
  std::unique_ptr<Metrics> m(new Metrics());
  m->recorded_ = std::make_shared<Recorded>();
  m->scraped_ = std::make_shared<ServerCollector>(sources);
  try {
    m->exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("--metrics_listen: cannot listen on ", listen,
                     " (address in use, or not a valid host:port): ", e.what()));
  }
  const std::vector<int> ports = m->exposer_->GetListeningPorts();
  if (ports.empty() || ports.front() <= 0) {
    return absl::UnavailableError(
        absl::StrCat("--metrics_listen: cannot listen on ", listen));
  }
  m->port_ = ports.front();
  m->exposer_->RegisterCollectable(m->recorded_->registry);
  m->exposer_->RegisterCollectable(m->scraped_);
  return m;
}

Metrics::~Metrics() {
  // Stop serving before the collector (and what it reads) can go away.
  exposer_.reset();
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
Metrics::NewInterceptorFactory() const {
  return std::make_unique<InterceptorFactory>(recorded_);
}

MapRegistry::CommitListener Metrics::MapCommitListener() const {
  return [recorded = recorded_](const MapSnapshot& map) {
    for (const v1::GraphInfo& g : map.info.graphs()) {
      recorded->builds.Add({{"graph", v1::GraphKind_Name(g.kind())}}, kBuildBuckets)
          .Observe(g.build_ms() / 1000.0);
    }
  };
}

}  // namespace wayfinder::server
