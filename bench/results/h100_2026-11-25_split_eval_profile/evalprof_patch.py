# Experiment-only: per-call phase times of the CUDA split's eval (QMMM_SPLIT_PROFILE), printed at destroy.
p='/work/main/src_cuda/field/field_split_gpu.cu'
s=open(p).read()
s=s.replace('#include <cstring>\n','#include <cstring>\n#include <chrono>\n#include <cstdio>\n#include <cstdlib>\n',1)
a='''            std::memcpy(pin_pts_.p, xyz + 3 * b, static_cast<size_t>(3 * m) * sizeof(double));
            check(split::launch_split(dev_view_, interp, self, nuc, m, pin_pts_.dev, pin_res_.dev, stream_), "split kernel launch");
            check(cudaStreamSynchronize(stream_), "split kernel (cudaStreamSynchronize)");
            const double *r = pin_res_.p;
            double *o = out + b;
            for (int64_t i = 0; i < m; ++i) {
                o[i] = r[i];
                nan |= r[i] != r[i];
            }'''
b='''            using C = std::chrono::steady_clock;
            if (!ev0_) cudaEventCreate(&ev0_), cudaEventCreate(&ev1_);
            const auto t0 = C::now();
            std::memcpy(pin_pts_.p, xyz + 3 * b, static_cast<size_t>(3 * m) * sizeof(double));
            const auto t1 = C::now();
            cudaEventRecord(ev0_, stream_);
            check(split::launch_split(dev_view_, interp, self, nuc, m, pin_pts_.dev, pin_res_.dev, stream_), "split kernel launch");
            cudaEventRecord(ev1_, stream_);
            const auto t2 = C::now();
            check(cudaStreamSynchronize(stream_), "split kernel (cudaStreamSynchronize)");
            const auto t3 = C::now();
            const double *r = pin_res_.p;
            double *o = out + b;
            for (int64_t i = 0; i < m; ++i) {
                o[i] = r[i];
                nan |= r[i] != r[i];
            }
            const auto t4 = C::now();
            if (interp && m == 8192) {
                float k = 0;
                cudaEventElapsedTime(&k, ev0_, ev1_);
                auto us = [](C::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
                ++pc_, pm_ += us(t1 - t0), pl_ += us(t2 - t1), ps_ += us(t3 - t2), pr_ += us(t4 - t3), pk_ += 1e3 * k;
            }'''
assert a in s; s=s.replace(a,b,1)
a='''    int dev_ = 0;
    cudaStream_t stream_ = nullptr;'''
b='''    cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
    long pc_ = 0;
    double pm_ = 0, pl_ = 0, ps_ = 0, pr_ = 0, pk_ = 0;
    int dev_ = 0;
    cudaStream_t stream_ = nullptr;'''
assert a in s; s=s.replace(a,b,1)
a='''        if (stream_) cudaStreamSynchronize(stream_);
        release();'''
b='''        if (stream_) cudaStreamSynchronize(stream_);
        if (pc_ && std::getenv("QMMM_SPLIT_PROFILE"))
            std::fprintf(stderr, "EVALPROF M=%lld calls %ld (N=8192), us per call: memcpy in %.1f, launch %.1f, sync wait %.1f, results out %.1f; kernel (events) %.1f\\n",
                         (long long)model_.x.size(), pc_, pm_ / pc_, pl_ / pc_, ps_ / pc_, pr_ / pc_, pk_ / pc_);
        release();'''
assert a in s; s=s.replace(a,b,1)
open(p,'w').write(s)
print('patched')
