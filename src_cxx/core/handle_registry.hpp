// handle_registry.hpp -- the set of live handles of one kind, so that a NULL, destroyed or foreign handle is
// reported (QMMM_ERR_BAD_HANDLE) instead of dereferenced. A handle is a token, not the object's address: a number
// never given out twice in a process, so a destroyed handle stays invalid even when a new object takes the old
// one's memory (destroy f, create g, destroy f again is BAD_HANDLE, and g lives on). The registry is locked only to
// look a handle up or change the set; work on different handles runs concurrently.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace qmmm {

template <class T>
class HandleRegistry {
public:
    // Takes the object and returns its handle (an opaque T* the caller never dereferences).
    T *add(std::unique_ptr<T> h) {
        std::lock_guard<std::mutex> g(m_);
        const uintptr_t token = ++last_ << 4;  // non-zero, aligned like a pointer
        live_.emplace(token, std::move(h));
        return reinterpret_cast<T *>(token);
    }
    // The object behind a live handle, or nullptr (NULL, destroyed, or never given out).
    T *get(const T *handle) const {
        if (!handle) return nullptr;
        std::lock_guard<std::mutex> g(m_);
        auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
        return it == live_.end() ? nullptr : it->second.get();
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
        return owned;
    }

private:
    mutable std::mutex m_;
    uintptr_t last_ = 0;
    std::unordered_map<uintptr_t, std::unique_ptr<T>> live_;
};

}  // namespace qmmm
