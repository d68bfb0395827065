// handle_registry.hpp -- the set of live handles of one kind, so that a NULL, destroyed or foreign
// handle is reported (QMMM_ERR_BAD_HANDLE) instead of dereferenced. The registry is locked only to
// look a handle up or change the set; work on different handles runs concurrently.
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>

namespace qmmm {

template <class T>
class HandleRegistry {
public:
    T *add(std::unique_ptr<T> h) {
        std::lock_guard<std::mutex> g(m_);
        T *raw = h.get();
        live_.emplace(raw, std::move(h));
        return raw;
    }
    bool contains(const T *h) const {
        if (!h) return false;
        std::lock_guard<std::mutex> g(m_);
        return live_.count(const_cast<T *>(h)) != 0;
    }
    // Takes the handle out of the set and hands its ownership back (empty if it was not live).
    std::unique_ptr<T> remove(T *h) {
        if (!h) return nullptr;
        std::lock_guard<std::mutex> g(m_);
        auto it = live_.find(h);
        if (it == live_.end()) return nullptr;
        auto owned = std::move(it->second);
        live_.erase(it);
        return owned;
    }

private:
    mutable std::mutex m_;
    std::unordered_map<T *, std::unique_ptr<T>> live_;
};

}  // namespace qmmm
