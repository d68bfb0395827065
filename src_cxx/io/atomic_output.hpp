// atomic_output.hpp -- the output files of qmmm-dcs and qmmm-rdf, written all or nothing.
//
// An output is opened before the program's work: a temporary file ".<name>.XXXXXX" is created in the output's
// folder then, so a missing or read-only folder, a name that is a folder or a device (/dev/full), or an existing
// file without --force is reported before anything is computed. The data go to the temporary file, which is
// flushed to disk and renamed over the final name by commit(), after every output is complete. Until then:
//   - an error (a full disk, `ulimit -f`: SIGXFSZ is ignored while outputs are open, so the write fails with
//     EFBIG and is reported) removes the temporary file (destructor);
//   - SIGINT, SIGTERM and SIGHUP (those the caller does not ignore, as nohup does SIGHUP) remove every open
//     temporary file, then end the program as the signal would, on whichever thread they arrive and however many
//     arrive at once (a file being made is waited for);
// so a failed or interrupted program leaves no partial file and never truncates an existing one. An existing
// output is kept: it is replaced only with force (--force), never silently backed up or overwritten.
// Errors throw qmmm::Error(QMMM_ERR_FILE_OPEN) naming the final path.
#pragma once
#include <cstdio>
#include <string>

namespace qmmm::tools {

// Whether two output paths name the same file, however spelt (relative or absolute, "./", "..", symbolic links in
// the folders): compared after weakly_canonical, so files that do not exist yet count too.
bool same_path(const std::string &a, const std::string &b);

// A registered temporary file beside `near` (same folder, so a rename is atomic); removed by the destructor and
// on the signals above unless kept.
class TempFile {
public:
    explicit TempFile(const std::string &near);
    ~TempFile();
    TempFile(const TempFile &) = delete;
    TempFile &operator=(const TempFile &) = delete;
    const std::string &path() const { return path_; }
    FILE *file() { return f_; }
    // Flushes to disk and closes (once; later calls do nothing). `name` is what error messages call the file.
    void close(const std::string &name);
    // The file is no longer removed (it was renamed).
    void keep();

private:
    std::string path_;
    FILE *f_ = nullptr;
    int slot_ = -1;
};

class AtomicOutput {
public:
    // Checks `path` and creates its temporary file. force: an existing file may be replaced.
    AtomicOutput(const std::string &path, bool force);
    const std::string &path() const { return path_; }
    // Where the data go until commit (open "wb"); a program may write temp_path() itself after finish().
    FILE *file() { return tmp_.file(); }
    const std::string &temp_path() const { return tmp_.path(); }
    void write(const std::string &s);
    // Flushes the temporary file to disk and closes it.
    void finish() { tmp_.close(path_); }
    // finish(), then renames the temporary file to path() (without force, refused if path() appeared meanwhile).
    void commit();

private:
    std::string path_;
    bool force_;
    TempFile tmp_;
};

}  // namespace qmmm::tools
