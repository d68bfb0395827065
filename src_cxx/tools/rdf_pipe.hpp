// rdf_pipe.hpp -- qmmm-rdf's reader thread: reads the trajectory and gathers each selection's coordinates into
// batches of frames while the main thread counts the previous batch (so reading and counting overlap; the
// counts do not depend on it). `depth` batches circulate: the reader fills free ones, the counter returns them.
// A reader error (bad file, frame without a box) ends the stream; rethrow() raises it on the main thread.
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
    Pipe(const Source &src, rdfio::Frame frame0, size_t batch, int depth = 3)
        : src_(src), frame_(std::move(frame0)), batch_(batch) {
        for (int k = 0; k < depth; ++k) {
            auto b = std::make_unique<Batch>();
            b->xyz.resize(src.selections->size());
            for (size_t s = 0; s < b->xyz.size(); ++s) b->xyz[s].resize(3 * (*src.selections)[s].size() * batch);
            b->boxes.resize(9 * batch);
            free_.push_back(b.get());
            all_.push_back(std::move(b));
        }
        th_ = std::thread([this] { loop(); });
    }
    ~Pipe() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        th_.join();
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
    // Hands a counted batch back to the reader.
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
    void loop() {
        try {
            int64_t index = src_.first;
            bool have = true;
            while (have) {
                Batch *b = take();
                if (!b) return;
                const auto t0 = std::chrono::steady_clock::now();
                b->indices.clear();
                while (have && b->indices.size() < batch_) {
                    put(*b, b->indices.size(), index);
                    have = advance(index);
                }
                read_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                std::lock_guard<std::mutex> g(m_);
                full_.push_back(b);
                cv_.notify_all();
            }
        } catch (...) {
            std::lock_guard<std::mutex> g(m_);
            error_ = std::current_exception();
        }
        std::lock_guard<std::mutex> g(m_);
        finished_ = true;
        cv_.notify_all();
    }
    Batch *take() {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return !free_.empty() || stop_; });
        if (stop_) return nullptr;
        Batch *b = free_.front();
        free_.pop_front();
        return b;
    }
    // Frame `index` (in frame_) into slot k of b.
    void put(Batch &b, size_t k, int64_t index) {
        const double *box = src_.box_fixed ? src_.box_fixed : frame_.box;
        if (!src_.box_fixed && !frame_.has_box)
            throw Error(QMMM_ERR_FILE_FORMAT,
                        src_.traj + ": frame " + std::to_string(index) + " has no periodic box; give --box");
        const auto &sels = *src_.selections;
        for (size_t s = 0; s < sels.size(); ++s) {
            double *dst = &b.xyz[s][3 * sels[s].size() * k];
            const int64_t *idx = sels[s].data(), m = static_cast<int64_t>(sels[s].size());
            const double *xyz = frame_.xyz.data();
            // A 1M-atom selection is a 24 MB gather, as long as reading the DCD frame itself (H100 host: the tool's
            // read-only rate was half the reader's): a few threads of the cores that wait for the GPU. A copy, so
            // the batch is the same whatever the thread count.
#pragma omp parallel for schedule(static) num_threads(4) if (m >= 65536)
            for (int64_t i = 0; i < m; ++i) {
                const double *p = xyz + 3 * idx[i];
                dst[3 * i] = p[0], dst[3 * i + 1] = p[1], dst[3 * i + 2] = p[2];
            }
        }
        std::copy(box, box + 9, &b.boxes[9 * k]);
        b.indices.push_back(index);
    }
    // Reads the next frame to use into frame_; false at the end (or past --last).
    bool advance(int64_t &index) {
        for (int64_t k = 1; k <= src_.stride; ++k) {
            if (src_.last >= 0 && index + k > src_.last) return false;
            const bool ok = k == src_.stride ? src_.reader->next(frame_) : src_.reader->skip();
            if (!ok) return false;
        }
        index += src_.stride;
        return true;
    }

    Source src_;
    rdfio::Frame frame_;
    size_t batch_;
    std::vector<std::unique_ptr<Batch>> all_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<Batch *> free_, full_;
    bool stop_ = false, finished_ = false;
    std::exception_ptr error_;
    double read_s_ = 0;
    std::thread th_;  // last: starts after the members it uses exist
};

}  // namespace qmmm::rdfpipe
