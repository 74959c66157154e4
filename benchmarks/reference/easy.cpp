// A compiled yardstick for cosched's simulator: EASY backfilling of a rigid workload on compact whole
// nodes, with the rules of `cosched simulate --scheduler easy` (simulator/engine.py and
// simulator/schedulers/backfilling.py; docs/simulator.md):
//
// - events: arrivals (submit times) and completions (start + run time); at one timestamp all
//   completions (by end, then job index), then all arrivals (workload order), then one pass;
// - a job takes ceil(cores / cores per node) whole nodes, the lowest idle ids;
// - the pass: start the queue's head while it fits; then, if nodes are free, the blocked head
//   reserves the shadow time (the earliest predicted end, start + estimate, in the order
//   (predicted end, job index), at which enough nodes are free) and each of the next `depth` jobs
//   starts if it fits now and ends by the shadow time or takes only the extra nodes (003 §5.1.2);
// - a pass where the smallest waiting job exceeds the free nodes is skipped (it could start none).
//
// Benchmark use only (benchmarks/bench_reference.py compiles and runs it); the package never uses
// it. Input (stdin): "nodes cores_per_node jobs depth", then one line per job in workload order:
// "submit run estimate cores". Output: one line of JSON with the simulation's wall and CPU seconds
// (reading and writing excluded); with an argument FILE, each job's start time, one per line.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <list>
#include <queue>
#include <set>
#include <utility>
#include <vector>

namespace {

struct Jobs {
    std::vector<double> submit, run, estimate;
    std::vector<int> units;
};

class Easy {
  public:
    Easy(const Jobs& jobs, int nodes, int depth)
        : jobs_(jobs), depth_(depth), free_(nodes), start_(jobs.submit.size(), -1.0),
          nodes_of_(jobs.submit.size()) {
        for (int node = 0; node < nodes; ++node) idle_.push_back(node);
    }

    void run() {
        const std::size_t count = jobs_.submit.size();
        std::size_t arrived = 0;
        while (arrived < count || !completions_.empty() || !waiting_.empty()) {
            double now = arrived < count ? jobs_.submit[arrived] : kInf;
            if (!completions_.empty() && completions_.top().first < now) now = completions_.top().first;
            now_ = now;
            while (!completions_.empty() && completions_.top().first <= now) {
                finish(completions_.top().second);
                completions_.pop();
            }
            while (arrived < count && jobs_.submit[arrived] <= now) {
                waiting_.push_back(static_cast<int>(arrived));
                waiting_units_.insert(jobs_.units[arrived]);
                ++arrived;
            }
            schedule();
        }
    }

    const std::vector<double>& starts() const { return start_; }

  private:
    static constexpr double kInf = 1e300;
    using Event = std::pair<double, int>;

    void start(std::list<int>::iterator position) {
        const int job = *position;
        const int units = jobs_.units[job];
        waiting_.erase(position);
        waiting_units_.erase(waiting_units_.find(units));
        nodes_of_[job].assign(idle_.begin(), idle_.begin() + units);  // the lowest idle ids
        idle_.erase(idle_.begin(), idle_.begin() + units);
        free_ -= units;
        start_[job] = now_;
        by_end_.insert({now_ + jobs_.estimate[job], job});
        completions_.push({now_ + jobs_.run[job], job});
    }

    void finish(int job) {
        by_end_.erase({start_[job] + jobs_.estimate[job], job});
        std::vector<int>& held = nodes_of_[job];
        const std::size_t middle = idle_.size();
        idle_.insert(idle_.end(), held.begin(), held.end());
        std::inplace_merge(idle_.begin(), idle_.begin() + middle, idle_.end());
        free_ += static_cast<int>(held.size());
    }

    void schedule() {
        if (waiting_.empty() || *waiting_units_.begin() > free_) return;
        while (!waiting_.empty() && jobs_.units[waiting_.front()] <= free_) start(waiting_.begin());
        if (waiting_.empty() || depth_ == 0 || free_ == 0) return;
        const int head = waiting_.front();
        double shadow = kInf;
        int extra = 0;
        int available = free_;
        for (const Event& event : by_end_) {  // the shadow time and the extra nodes
            available += jobs_.units[event.second];
            if (available >= jobs_.units[head]) {
                shadow = event.first;
                extra = available - jobs_.units[head];
                break;
            }
        }
        auto candidate = std::next(waiting_.begin());
        for (int seen = 0; seen < depth_ && candidate != waiting_.end(); ++seen) {
            const int job = *candidate;
            const int size = jobs_.units[job];
            auto next = std::next(candidate);
            const bool fits = size <= free_;
            const bool short_job = now_ + jobs_.estimate[job] <= shadow;
            if (fits && (short_job || size <= extra)) {
                start(candidate);
                if (!short_job) extra -= size;
                if (free_ == 0) return;
            }
            candidate = next;
        }
    }

    const Jobs& jobs_;
    const int depth_;
    int free_;
    double now_ = 0.0;
    std::vector<double> start_;
    std::vector<std::vector<int>> nodes_of_;
    std::vector<int> idle_;
    std::list<int> waiting_;
    std::multiset<int> waiting_units_;
    std::set<Event> by_end_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> completions_;
};

}  // namespace

int main(int argc, char** argv) {
    int nodes = 0, cores_per_node = 0, depth = 0;
    std::size_t count = 0;
    if (std::scanf("%d %d %zu %d", &nodes, &cores_per_node, &count, &depth) != 4) return 2;
    Jobs jobs;
    jobs.submit.resize(count);
    jobs.run.resize(count);
    jobs.estimate.resize(count);
    jobs.units.resize(count);
    for (std::size_t job = 0; job < count; ++job) {
        long cores = 0;
        if (std::scanf("%lf %lf %lf %ld", &jobs.submit[job], &jobs.run[job], &jobs.estimate[job],
                       &cores) != 4)
            return 2;
        jobs.units[job] = static_cast<int>((cores + cores_per_node - 1) / cores_per_node);
    }
    const auto wall = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    Easy easy(jobs, nodes, depth);
    easy.run();
    const double cpu_seconds = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
    const double wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    std::printf("{\"seconds\": %.9f, \"cpu_seconds\": %.9f}\n", wall_seconds, cpu_seconds);
    if (argc > 1) {
        std::FILE* out = std::fopen(argv[1], "w");
        if (out == nullptr) return 2;
        for (double start : easy.starts()) std::fprintf(out, "%.17g\n", start);
        std::fclose(out);
    }
    return 0;
}
