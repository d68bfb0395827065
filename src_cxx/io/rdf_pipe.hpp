// rdf_pipe.hpp -- qmmm-rdf's frame pipeline: a reader thread decodes the trajectory, a gather thread copies each
// selection's coordinates into batches of frames, and the main thread counts the previous batch (so reading,
// gathering and counting overlap; the counts do not depend on it). Where every selection is a range of atoms,
// the reader decodes straight into the batches and there is no gather. `depth` batches circulate: the gatherer
// (or the reader) fills free ones, the counter returns them. A reader or gather error (bad file, frame without a
// box) ends the stream; rethrow() raises it on the main thread.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "qmmm_accel.h"
#include "rdf_io.hpp"
#include "stream_store.hpp"

namespace qmmm::rdfpipe {

struct Source {
    rdfio::Reader *reader = nullptr;
    std::string traj;                  // for messages
    int64_t first = 0, last = -1, stride = 1;
    const double *box_fixed = nullptr;  // --box, or null: each frame's own
    const std::vector<std::vector<int64_t>> *selections = nullptr;  // atom indices per selection
};

struct Batch {
    std::vector<std::vector<double>> xyz;  // per selection: frames x 3 n_sel
    std::vector<double> boxes;             // frames x 9
    std::vector<int64_t> indices;          // trajectory frame numbers
};

class Pipe {
public:
    // `frame0` is frame `src.first`, already read (the atoms it names made the selections).
    Pipe(const Source &src, rdfio::Frame frame0, size_t batch, int depth = 3, int raw_depth = 4)
        : src_(src), batch_(batch) {
        for (int k = 0; k < depth; ++k) {
            auto b = std::make_unique<Batch>();
            b->xyz.resize(src.selections->size());
            for (size_t s = 0; s < b->xyz.size(); ++s) b->xyz[s].resize(3 * (*src.selections)[s].size() * batch);
            b->boxes.resize(9 * batch);
            free_.push_back(b.get());
            all_.push_back(std::move(b));
        }
        for (int k = 0; k < raw_depth; ++k) {
            raws_.push_back(std::make_unique<Raw>());
            raw_free_.push_back(raws_.back().get());
        }
        raw_free_.front()->f = std::move(frame0);
        // Every selection a range of atoms (all atoms, or "index a-b"): the reader thread decodes straight into
        // the batches (rdfio::Frame::into) and no thread copies the frame again.
        bool ranges = true;
        for (const auto &sel : *src.selections)
            for (size_t i = 1; ranges && i < sel.size(); ++i) ranges = sel[i] == sel[0] + int64_t(i);
        if (ranges) {
            reader_ = std::thread([this] { direct_loop(); });
        } else {
            reader_ = std::thread([this] { read_loop(); });
            gatherer_ = std::thread([this] { gather_loop(); });
        }
    }
    ~Pipe() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        reader_.join();
        if (gatherer_.joinable()) gatherer_.join();
    }
    Pipe(const Pipe &) = delete;
    Pipe &operator=(const Pipe &) = delete;

    // The next full batch, or null at the end of the frames (or after a reader error: see rethrow).
    Batch *pop() {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return !full_.empty() || finished_; });
        if (full_.empty()) return nullptr;
        Batch *b = full_.front();
        full_.pop_front();
        return b;
    }
    // Hands a counted batch back to the gatherer.
    void done(Batch *b) {
        {
            std::lock_guard<std::mutex> g(m_);
            free_.push_back(b);
        }
        cv_.notify_all();
    }
    void rethrow() {
        std::lock_guard<std::mutex> g(m_);
        if (error_) std::rethrow_exception(error_);
    }
    double read_seconds() const { return read_s_; }  // reader busy time (valid after pop() returned null)

private:
    // Any selections: two threads, so the gather (a 24 MB copy for a 1M-atom selection, as long as decoding a DCD
    // frame) does not slow the reading: the reader decodes frames into `raw_depth` frame buffers; the gatherer copies each
    // selection's atoms out of them into batches of frames. Both stop at the first error, which pop() then ends on.
    struct Raw {
        rdfio::Frame f;
        int64_t index = 0;
    };

    void read_loop() {
        try {
            int64_t index = src_.first;
            for (bool first = true;; first = false) {
                Raw *r = take(raw_free_);
                if (!r) break;
                const auto t0 = std::chrono::steady_clock::now();
                const bool have = first || advance(index, r->f);
                read_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (!have) {
                    give(raw_free_, r);
                    break;
                }
                r->index = index;
                give(raw_full_, r);
            }
        } catch (...) {
            fail(std::current_exception());
        }
        std::lock_guard<std::mutex> g(m_);
        read_done_ = true;
        cv_.notify_all();
    }
    void gather_loop() {
        try {
            for (bool more = true; more;) {
                Batch *b = take(free_);
                if (!b) break;
                b->indices.clear();
                while (b->indices.size() < batch_) {
                    Raw *r = take_raw_full();
                    if (!r) {
                        more = false;
                        break;
                    }
                    put(*b, b->indices.size(), *r);
                    give(raw_free_, r);
                }
                if (b->indices.empty()) break;
                give(full_, b);
            }
        } catch (...) {
            fail(std::current_exception());
        }
        std::lock_guard<std::mutex> g(m_);
        finished_ = true;
        cv_.notify_all();
    }
    // Ranges mode: one thread reads each frame into its batch slot (a reader that cannot, a text format, fills
    // the frame's xyz, which is then gathered here).
    void direct_loop() {
        try {
            Raw &r = *raw_free_.front();  // frame0 first, then every frame decoded in place
            int64_t index = src_.first;
            bool have = true, first = true;
            while (have) {
                Batch *b = take(free_);
                if (!b) break;
                b->indices.clear();
                while (b->indices.size() < batch_) {
                    const size_t k = b->indices.size();
                    r.f.into.clear();
                    r.f.into_done = false;
                    if (!first) {
                        const auto &sels = *src_.selections;
                        for (size_t s = 0; s < sels.size(); ++s)
                            r.f.into.push_back({sels[s].front(), int64_t(sels[s].size()), &b->xyz[s][3 * sels[s].size() * k]});
                        const auto t0 = std::chrono::steady_clock::now();
                        have = advance(index, r.f);
                        read_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                        if (!have) break;
                    }
                    first = false;
                    r.index = index;
                    put(*b, k, r);
                }
                if (b->indices.empty()) break;
                give(full_, b);
            }
        } catch (...) {
            fail(std::current_exception());
        }
        std::lock_guard<std::mutex> g(m_);
        read_done_ = true;
        finished_ = true;
        cv_.notify_all();
    }
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> g(m_);
        if (!error_) error_ = e;
        failed_ = true;
        cv_.notify_all();
    }
    // An item of q, or null once stopped or failed.
    template <class T>
    T *take(std::deque<T *> &q) {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return !q.empty() || stop_ || failed_; });
        if (stop_ || failed_) return nullptr;
        T *x = q.front();
        q.pop_front();
        return x;
    }
    // The next decoded frame, or null at the end (or once stopped or failed).
    Raw *take_raw_full() {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return !raw_full_.empty() || read_done_ || stop_ || failed_; });
        if (stop_ || failed_ || raw_full_.empty()) return nullptr;
        Raw *r = raw_full_.front();
        raw_full_.pop_front();
        return r;
    }
    template <class T>
    void give(std::deque<T *> &q, T *x) {
        {
            std::lock_guard<std::mutex> g(m_);
            q.push_back(x);
        }
        cv_.notify_all();
    }
    // Frame r into slot k of b (its coordinates are there already if the reader wrote them in place).
    void put(Batch &b, size_t k, const Raw &r) {
        const double *box = src_.box_fixed ? src_.box_fixed : r.f.box;
        if (!src_.box_fixed && !r.f.has_box)
            throw Error(QMMM_ERR_FILE_FORMAT,
                        src_.traj + ": frame " + std::to_string(r.index) + " has no periodic box; give --box");
        const auto &sels = *src_.selections;
        for (size_t s = 0; s < sels.size() && !r.f.into_done; ++s) {
            double *dst = &b.xyz[s][3 * sels[s].size() * k];
            const int64_t *idx = sels[s].data(), m = static_cast<int64_t>(sels[s].size());
            const double *xyz = r.f.xyz.data();
            // A 1M-atom selection is a 24 MB gather: a few threads of the cores that wait for the GPU, streaming
            // stores (the batch is far larger than the caches). A copy, so the batch is the same whatever the
            // thread count.
#pragma omp parallel num_threads(4) if (m >= 65536)
            {
#pragma omp for schedule(static)
                for (int64_t i = 0; i < m; ++i) {
                    const double *p = xyz + 3 * idx[i];
                    stream_store(dst + 3 * i, p[0]), stream_store(dst + 3 * i + 1, p[1]), stream_store(dst + 3 * i + 2, p[2]);
                }
                stream_fence();
            }
        }
        std::copy(box, box + 9, &b.boxes[9 * k]);
        b.indices.push_back(r.index);
    }
    // Reads the next frame to use into f; false at the end (or past --last).
    bool advance(int64_t &index, rdfio::Frame &f) {
        for (int64_t k = 1; k <= src_.stride; ++k) {
            if (src_.last >= 0 && index + k > src_.last) return false;
            const bool ok = k == src_.stride ? src_.reader->next(f) : src_.reader->skip();
            if (!ok) return false;
        }
        index += src_.stride;
        return true;
    }

    Source src_;
    size_t batch_;
    std::vector<std::unique_ptr<Batch>> all_;
    std::vector<std::unique_ptr<Raw>> raws_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<Batch *> free_, full_;
    std::deque<Raw *> raw_free_, raw_full_;
    bool stop_ = false, failed_ = false, read_done_ = false, finished_ = false;
    std::exception_ptr error_;
    double read_s_ = 0;
    std::thread reader_, gatherer_;  // last: they start after the members they use exist
};

}  // namespace qmmm::rdfpipe
