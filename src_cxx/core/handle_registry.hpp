// handle_registry.hpp -- the set of live handles of one kind, so that a NULL, destroyed or foreign handle is
// reported (QMMM_ERR_BAD_HANDLE) instead of dereferenced. A handle is a token, not the object's address: a number
// never given out twice in a process, so a destroyed handle stays invalid even when a new object takes the old
// one's memory (destroy f, create g, destroy f again is BAD_HANDLE, and g lives on). Every kind (field, environment,
// RDF) draws its tokens from one process-wide counter, so a handle of one kind is never live in another kind's
// registry: qmmm_env_destroy((qmmm_env)field) is BAD_HANDLE (with a counter per kind, the first handle of every kind
// was the same token, and the call destroyed the environment that had it). The registry is locked only to
// look a handle up or change the set; work on different handles runs concurrently.
//
// A legacy code calls one field millions of times with a few charges, where a locked map lookup was a tenth of the
// call (~90 of ~800 instructions at 10 charges x 1 point). So each thread remembers its last lookup: the handle,
// the object and the registry's removal count then. The remembered object is returned while no handle has been
// removed since; any removal (destroy) sends every thread back to the locked map once. A handle is never live
// again after its removal, so a remembered pair is right exactly while the count is unchanged.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace qmmm {

// The last token given out, shared by every registry of every kind: a token is never given out twice, not by another
// kind's registry nor by a registry built where another one was destroyed (a thread's remembered lookup names the
// registry by address). One shared library holds every registry, so this is one counter in the process.
inline std::atomic<uintptr_t> handle_tokens{0};

template <class T>
class HandleRegistry {
public:
    // Takes the object and returns its handle (an opaque T* the caller never dereferences).
    T *add(std::unique_ptr<T> h) {
        std::lock_guard<std::mutex> g(m_);
        const uintptr_t token = (handle_tokens.fetch_add(1) + 1) << 4;  // non-zero, aligned like a pointer; unique in the process
        live_.emplace(token, std::move(h));
        return reinterpret_cast<T *>(token);
    }
    // The object behind a live handle, or nullptr (NULL, destroyed, or never given out).
    T *get(const T *handle) const {
        if (!handle) return nullptr;
        const uintptr_t token = reinterpret_cast<uintptr_t>(handle);
        thread_local Last last;
        if (last.token == token && last.registry == this && last.removals == removals_.load(std::memory_order_acquire))
            return last.object;
        std::lock_guard<std::mutex> g(m_);
        auto it = live_.find(token);
        if (it == live_.end()) return nullptr;
        last = Last{this, token, removals_.load(std::memory_order_relaxed), it->second.get()};
        return last.object;
    }
    bool contains(const T *handle) const { return get(handle) != nullptr; }
    // Takes the handle out of the set and hands its object back (empty if it was not live).
    std::unique_ptr<T> remove(const T *handle) {
        if (!handle) return nullptr;
        std::lock_guard<std::mutex> g(m_);
        auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
        if (it == live_.end()) return nullptr;
        auto owned = std::move(it->second);
        live_.erase(it);
        removals_.fetch_add(1, std::memory_order_release);  // every thread's remembered lookup is now stale
        return owned;
    }

private:
    struct Last {  // a thread's last successful lookup
        const HandleRegistry *registry = nullptr;
        uintptr_t token = 0;
        uint64_t removals = 0;
        T *object = nullptr;
    };
    mutable std::mutex m_;
    std::atomic<uint64_t> removals_{0};
    std::unordered_map<uintptr_t, std::unique_ptr<T>> live_;
};

}  // namespace qmmm
