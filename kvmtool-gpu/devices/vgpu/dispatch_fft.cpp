// Handlers for cuFFT's basic plans forwarded as calls (VGPU_OP_FFT_*):
// plans are VM handles owned by the current context, each charged its work
// area against the VM's quota (unless the program gives the work area); an exec's input and output, by the plan's
// shape, must lie in the VM's memory on this device before the library
// touches them.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

#include <algorithm>
#include <cstring>

namespace kvmgpu::vgpu {

CommandResult CommandDispatch::op_FFT_PLAN(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_FFT_PLAN>(c);
    const uint64_t n[3] = {a.nx, a.ny, a.nz};
    const auto shape = FftShape::from(a.rank, n, a.type, a.batch);
    if (!shape) return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT plan: rank, a size, the type or the batch");
    if (shape->rank > 1 && shape->batch != 1) return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT plan: a 2-D or 3-D plan of a batch");
    return fft_add_plan(*shape, true);
}

// payload vgpu_fft_plan_many: cufftMakePlanMany64's arguments (FftShape::many checks them).
CommandResult CommandDispatch::op_FFT_PLAN_MANY(GuestCommand& c) {
    vgpu_fft_plan_many m;
    if (c.desc.payload_len != sizeof m) return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT plan: payload is not a vgpu_fft_plan_many");
    std::memcpy(&m, c.payload.data(), sizeof m);
    if (m.flags & ~uint32_t{VGPU_FFT_ADVANCED | VGPU_FFT_NO_AUTO_ALLOCATION} || m.reserved)
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT plan: unknown flags");
    const bool advanced = m.flags & VGPU_FFT_ADVANCED;
    // Negative values become huge and are refused by many(); with the basic
    // layout the strides and distances are ignored, as cuFFT ignores them.
    FftShape::Layout in, out;
    const uint64_t n[3] = {uint64_t(m.n[0]), uint64_t(m.n[1]), uint64_t(m.n[2])};
    for (int d = 0; d < 3 && advanced; ++d) in.embed[d] = uint64_t(m.inembed[d]), out.embed[d] = uint64_t(m.onembed[d]);
    if (advanced) {
        in.stride = uint64_t(m.istride), in.dist = uint64_t(m.idist);
        out.stride = uint64_t(m.ostride), out.dist = uint64_t(m.odist);
    }
    const auto shape = FftShape::many(n, m.rank, m.type, uint64_t(m.batch), advanced, in, out);
    if (!shape) return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT plan: rank, a size, the type, the batch or the layout");
    return fft_add_plan(*shape, !(m.flags & VGPU_FFT_NO_AUTO_ALLOCATION));
}

CommandResult CommandDispatch::fft_add_plan(const FftShape& shape, bool auto_allocation) {
    FftLibrary* lib = backend().fft();
    if (!lib) return fail(VGPU_ERROR_NOT_INITIALIZED, "this backend has no cuFFT");
    BackendFft p = 0;
    uint64_t work = 0;
    const Status s = backend_result(lib->plan(shape, auto_allocation, &p, &work));
    if (s != VGPU_SUCCESS) return done(s);
    const uint64_t charge = auto_allocation ? work : 0;
    if (!allocs_.charge(charge)) {
        lib->destroy(p);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "a cuFFT plan's work area is past the VM's device-memory quota");
    }
    const auto vm = fft_.insert(FftEntry{p, shape, work, auto_allocation, 0}, ctx_);
    if (!vm) {
        lib->destroy(p);
        allocs_.uncharge(charge);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "cuFFT plan table full");
    }
    return done(VGPU_SUCCESS, *vm, work);
}

// The work area, [dptr, + the plan's work bytes), inside one of the
// VM's allocations (the library writes it). The program may free it later:
// each exec checks it again.
CommandResult CommandDispatch::op_FFT_SET_WORK_AREA(GuestCommand& c) {
    const auto [plan, dptr] = args_of<VGPU_OP_FFT_SET_WORK_AREA>(c);
    FftEntry* e = fft_.find(plan, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuFFT plan");
    if (dptr == 0 || !library_range_ok(dptr, std::max<uint64_t>(e->work, 1)))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT work area not inside this VM's memory on this device");
    const Status s = backend_result(backend().fft()->set_work_area(e->plan, dptr));
    if (s == VGPU_SUCCESS) e->work_area = dptr;
    return done(s);
}

CommandResult CommandDispatch::op_FFT_DESTROY(GuestCommand& c) {
    const auto e = fft_.erase(args_of<VGPU_OP_FFT_DESTROY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuFFT plan");
    allocs_.uncharge(e->auto_allocation ? e->work : 0);
    return done(backend_result(backend().fft()->destroy(e->plan)));
}

CommandResult CommandDispatch::op_FFT_SET_STREAM(GuestCommand& c) {
    const auto [plan, stream] = args_of<VGPU_OP_FFT_SET_STREAM>(c);
    const FftEntry* e = fft_.find(plan, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuFFT plan");
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    return done(backend_result(backend().fft()->set_stream(e->plan, s)));
}

// type: the exec's (the plan's cufftType); direction for C2C and Z2Z.
CommandResult CommandDispatch::op_FFT_EXEC(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_FFT_EXEC>(c);
    const FftEntry* e = fft_.find(a.plan, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "cuFFT plan");
    const uint64_t in = a.input, out = a.output;
    if (a.type != static_cast<uint64_t>(e->shape.type))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT exec of another type than its plan's");
    const auto direction = static_cast<int64_t>(a.direction);
    const bool complex_both = e->shape.type == FftType::C2C || e->shape.type == FftType::Z2Z;
    if (complex_both && direction != -1 && direction != 1)
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT direction is neither forward (-1) nor inverse (+1)");
    if (!library_range_ok(in, e->shape.input_bytes()) || !library_range_ok(out, e->shape.output_bytes()))
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT input or output not inside this VM's memory on this device");
    if (e->work_area ? !library_range_ok(e->work_area, std::max<uint64_t>(e->work, 1)) : !e->auto_allocation && e->work)
        return fail(VGPU_ERROR_INVALID_VALUE, "cuFFT work area not set, or no longer inside this VM's memory");
    return done(backend_result(backend().fft()->exec(e->plan, e->shape, in, out, static_cast<int>(direction))));
}

void CommandDispatch::destroy_fft_of(uint64_t ctx) {
    fft_.erase_owned_by(ctx, [&](const FftEntry& e) {
        allocs_.uncharge(e.auto_allocation ? e.work : 0);
        if (FftLibrary* lib = backend().fft()) lib->destroy(e.plan);
    });
}

} // namespace kvmgpu::vgpu
