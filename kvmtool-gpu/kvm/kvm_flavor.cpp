#include "kvmtool-gpu/kvm/kvm_flavor.h"

#include <cpuid.h>
#include <sys/stat.h>

#include <cstring>

#include "kvmtool-gpu/kvm/kvm_system.h"

namespace kvmgpu {

namespace {
bool module_loaded(const char* name) {
    struct stat st;
    return ::stat((std::string("/sys/module/") + name).c_str(), &st) == 0;
}

std::string hypervisor_signature() {
    if (!KvmSystem::host_is_virtualized()) return "";
    unsigned a, b, c, d;
    __cpuid(0x40000000, a, b, c, d);
    char sig[13] = {};
    std::memcpy(sig, &b, 4);
    std::memcpy(sig + 4, &c, 4);
    std::memcpy(sig + 8, &d, 4);
    return sig;
}
} // namespace

KvmFlavor detect_kvm_flavor() {
    KvmFlavor f;
    if (module_loaded("kvm_pvm")) f.engine = "pvm";
    else if (module_loaded("kvm_intel")) f.engine = "vmx";
    else if (module_loaded("kvm_amd")) f.engine = "svm";
    else f.engine = "unknown";
    f.host_hypervisor = hypervisor_signature();
    f.nested = KvmSystem::host_is_virtualized();
    f.host_emulated = f.host_hypervisor.rfind("TCG", 0) == 0;
    return f;
}

std::string KvmFlavor::describe() const {
    std::string s = "KVM (" + engine;
    if (engine == "pvm") s += ": ring-3 guest code native, ring 0 emulated";
    if (nested) s += "; nested under " + (host_hypervisor.empty() ? std::string("a hypervisor") : host_hypervisor);
    if (host_hypervisor.rfind("TCG", 0) == 0) s += ", itself software-emulated";
    return s + ")";
}

} // namespace kvmgpu
