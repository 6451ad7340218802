// libclprobe_work_counter.so: an Oclgrind plugin (loaded through OCLGRIND_PLUGINS) that counts
// what one kernel launch does — floating-point operations by precision, integer operations, bytes
// loaded and stored per address space — while Oclgrind simulates it (docs/trace.md, "How work is
// counted"). `clprobe __count-work` runs one captured launch under Oclgrind with this plugin.
//
// Sampling: the plugin decides, as Oclgrind reaches each work-group in order, whether to simulate
// it or to skip it (its work-items are marked finished before the first instruction, so nothing of
// it runs). A skipped group is stood for by the last simulated one: each simulated group is
// weighted by the number of groups from it to the next one simulated. The stride starts at 1
// (every group: an exact count) and grows only as far as the time budget needs, so a small launch
// is counted exactly and a large one evenly over its whole range. Work-groups are independent by
// the OpenCL execution model, so skipping some changes no other group's work, only the outputs
// the skipped ones would have written (the caller checks outputs only of exact counts).
//
// Environment: CLPROBE_WORK_OUT (result file, JSON, written whole and renamed into place),
// CLPROBE_WORK_SECONDS (simulation budget; 0: none, every group), CLPROBE_WORK_KERNEL (count only
// the launch of this kernel; others are run but not counted).
#include <oclgrind/Context.h>
#include <oclgrind/Kernel.h>
#include <oclgrind/KernelInvocation.h>
#include <oclgrind/Memory.h>
#include <oclgrind/Plugin.h>
#include <oclgrind/WorkGroup.h>
#include <oclgrind/WorkItem.h>
#include <unistd.h>

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "work/work_classes.hpp"
#include "work/work_tally.hpp"

namespace {

using namespace clprobe::work;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// What one instruction adds, decided once per instruction (a kernel's loop runs the same few
// hundred instructions millions of times).
struct InstructionWork {
    OpClass op = OpClass::none;
    Precision precision = Precision::single;
    unsigned lanes = 1;
    unsigned int_bits = 32;
    bool address = false;  // integer work on addresses or loop control (DataValues)
};

Precision precision_of(const llvm::Type* scalar) {
    if (scalar->isHalfTy()) return Precision::half;
    if (scalar->isDoubleTy()) return Precision::dbl;
    return Precision::single;
}

unsigned lanes_of(const llvm::Type* t) {
    if (const auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t)) return v->getNumElements();
    return 1;
}

OpClass class_of_opcode(unsigned opcode) {
    switch (opcode) {
        case llvm::Instruction::FAdd:
        case llvm::Instruction::FSub:
        case llvm::Instruction::FMul:
        case llvm::Instruction::FDiv:
        case llvm::Instruction::FRem:
        case llvm::Instruction::FNeg:
            return OpClass::flop;
        case llvm::Instruction::Add:
        case llvm::Instruction::Sub:
        case llvm::Instruction::Mul:
        case llvm::Instruction::UDiv:
        case llvm::Instruction::SDiv:
        case llvm::Instruction::URem:
        case llvm::Instruction::SRem:
        case llvm::Instruction::Shl:
        case llvm::Instruction::LShr:
        case llvm::Instruction::AShr:
        case llvm::Instruction::And:
        case llvm::Instruction::Or:
        case llvm::Instruction::Xor:
        case llvm::Instruction::ICmp:
            return OpClass::int_op;
        default:
            return OpClass::none;
    }
}

// Integer values that only address memory or steer control flow: the index arithmetic a
// compiler folds into addressing modes, and loop counters and bounds tests that a vectorising
// driver runs once for a whole vector of work-items (they are uniform across them). Oclgrind
// executes them per work-item, so counting them as ALU work would charge a kernel for arithmetic
// it does not do per item on real hardware. An integer value computes data when some chain of
// integer operations carries it to a data use: a stored value, an argument of a call (other than
// the offset of vload/vstore and work-item queries), a conversion to floating point, a return. Uses
// by getelementptr, branches, switches, int-to-pointer casts and the condition of a select are not
// data uses. Found per function, once, by propagating backwards from the data uses.
class DataValues {
  public:
    bool computes_data(const llvm::Instruction* instruction) {
        const llvm::Function* f = instruction->getFunction();
        if (f && done_.insert(f).second) analyse(*f);
        return data_.count(instruction) != 0;
    }

  private:
    // The private variable (an alloca) a pointer addresses, through casts and getelementptrs; null
    // for any other memory. An unoptimised build (-cl-opt-disable) keeps every variable in one.
    static const llvm::AllocaInst* private_variable(const llvm::Value* pointer) {
        for (;;) {
            if (const auto* a = llvm::dyn_cast<llvm::AllocaInst>(pointer)) return a;
            if (const auto* g = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer))
                pointer = g->getPointerOperand();
            else if (const auto* c = llvm::dyn_cast<llvm::CastInst>(pointer))
                pointer = c->getOperand(0);
            else
                return nullptr;
        }
    }

    // Integer instructions through which data flows on to their operands (a load from a private
    // variable: on to the values stored into it).
    static bool passes_data(const llvm::Instruction* i) {
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(i))
            return load->getType()->isIntOrIntVectorTy() && private_variable(load->getPointerOperand());
        if (!i->getType()->isIntOrIntVectorTy() && !llvm::isa<llvm::ICmpInst>(i)) return false;
        // Integer builtins and intrinsics (rotate, popcount, mul_hi, fshl...) compute from their arguments.
        if (const auto* call = llvm::dyn_cast<llvm::CallInst>(i)) {
            const llvm::Function* f = call->getCalledFunction();
            if (!f || !f->isDeclaration()) return false;
            const std::string name(builtin_name(f->getName().str()));
            return name.rfind("get_", 0) != 0 && name.rfind("vload", 0) != 0 && name.rfind("atom", 0) != 0 &&
                   name.rfind("read_image", 0) != 0;
        }
        return llvm::isa<llvm::BinaryOperator>(i) || llvm::isa<llvm::ICmpInst>(i) || llvm::isa<llvm::PHINode>(i) ||
               llvm::isa<llvm::CastInst>(i) || llvm::isa<llvm::SelectInst>(i) ||
               llvm::isa<llvm::ExtractElementInst>(i) || llvm::isa<llvm::InsertElementInst>(i) ||
               llvm::isa<llvm::ShuffleVectorInst>(i) || llvm::isa<llvm::FreezeInst>(i);
    }

    // Whether `user` uses `value` as data, apart from passing it on (passes_data).
    static bool data_use(const llvm::Value* value, const llvm::Instruction* user) {
        if (llvm::isa<llvm::GetElementPtrInst>(user) || llvm::isa<llvm::BranchInst>(user) ||
            llvm::isa<llvm::SwitchInst>(user) || llvm::isa<llvm::IntToPtrInst>(user))
            return false;
        if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(user))
            // Into a private variable: whether it is data is decided where it is loaded.
            return store->getValueOperand() == value && !private_variable(store->getPointerOperand());
        if (const auto* call = llvm::dyn_cast<llvm::CallInst>(user)) {
            if (passes_data(call)) return false;  // its result's uses decide
            const llvm::Function* f = call->getCalledFunction();
            if (!f) return true;
            const std::string name(builtin_name(f->getName().str()));
            if (name.rfind("get_", 0) == 0 || name.rfind("llvm.lifetime", 0) == 0 || name.rfind("llvm.dbg", 0) == 0)
                return false;
            if (name.rfind("vload", 0) == 0) return call->arg_size() > 0 && call->getArgOperand(0) != value;
            if (name.rfind("vstore", 0) == 0) return call->arg_size() > 1 && call->getArgOperand(1) != value;
            if (name.rfind("llvm.memcpy", 0) == 0 || name.rfind("llvm.memset", 0) == 0 ||
                name.rfind("llvm.memmove", 0) == 0)
                return false;
            return true;
        }
        if (const auto* select = llvm::dyn_cast<llvm::SelectInst>(user))
            return select->getCondition() != value && !passes_data(select);
        return !passes_data(user);
    }

    void mark(const llvm::Value* v, std::vector<const llvm::Instruction*>& work) {
        const auto* i = llvm::dyn_cast<llvm::Instruction>(v);
        if (i && passes_data(i) && data_.insert(i).second) work.push_back(i);
    }

    void analyse(const llvm::Function& f) {
        std::vector<const llvm::Instruction*> work;
        std::unordered_map<const llvm::AllocaInst*, std::vector<const llvm::Value*>> stored;
        for (const llvm::BasicBlock& block : f)
            for (const llvm::Instruction& i : block)
                if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&i))
                    if (const auto* variable = private_variable(store->getPointerOperand()))
                        stored[variable].push_back(store->getValueOperand());
        for (const llvm::BasicBlock& block : f)
            for (const llvm::Instruction& i : block) {
                if (!passes_data(&i)) continue;
                for (const llvm::User* u : i.users())
                    if (const auto* user = llvm::dyn_cast<llvm::Instruction>(u); user && data_use(&i, user)) {
                        mark(&i, work);
                        break;
                    }
            }
        while (!work.empty()) {
            const llvm::Instruction* i = work.back();
            work.pop_back();
            if (const auto* select = llvm::dyn_cast<llvm::SelectInst>(i)) {
                mark(select->getTrueValue(), work);
                mark(select->getFalseValue(), work);
                continue;
            }
            if (const auto* call = llvm::dyn_cast<llvm::CallInst>(i)) {
                for (const llvm::Value* argument : call->args())
                    mark(argument, work);
                continue;
            }
            if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(i)) {
                const auto it = stored.find(private_variable(load->getPointerOperand()));
                if (it != stored.end())
                    for (const llvm::Value* value : it->second)
                        mark(value, work);
                continue;
            }
            for (const llvm::Value* operand : i->operands())
                mark(operand, work);
        }
    }

    std::unordered_set<const llvm::Function*> done_;
    std::unordered_set<const llvm::Value*> data_;
};

InstructionWork work_of(const llvm::Instruction* instruction, DataValues& data) {
    InstructionWork w;
    // A compare's result is a boolean: its operands say what was compared.
    const llvm::Type* type = instruction->getOpcode() == llvm::Instruction::ICmp ? instruction->getOperand(0)->getType()
                                                                                 : instruction->getType();
    w.lanes = lanes_of(type);
    const llvm::Type* scalar = type->getScalarType();
    if (const auto* call = llvm::dyn_cast<llvm::CallInst>(instruction)) {
        const llvm::Function* f = call->getCalledFunction();
        // The program's own functions are counted by their instructions, not by their calls.
        if (!f || !f->isDeclaration()) return w;
        w.op = classify_call(f->getName().str(), scalar->isFloatingPointTy(), scalar->isIntegerTy());
    } else {
        w.op = class_of_opcode(instruction->getOpcode());
    }
    if (scalar->isFloatingPointTy()) w.precision = precision_of(scalar);
    if (scalar->isIntegerTy()) w.int_bits = scalar->getIntegerBitWidth();
    if ((w.op == OpClass::int_op || w.op == OpClass::int_mad) && !data.computes_data(instruction)) w.address = true;
    return w;
}

class WorkCounter : public oclgrind::Plugin {
  public:
    explicit WorkCounter(const oclgrind::Context* context) : Plugin(context) {
        if (const char* out = std::getenv("CLPROBE_WORK_OUT")) out_ = out;
        if (const char* s = std::getenv("CLPROBE_WORK_SECONDS")) budget_ = std::max(0.0, std::atof(s));
        if (const char* k = std::getenv("CLPROBE_WORK_KERNEL")) only_kernel_ = k;
        // Tests only: a planted miscount (an FMA as one FLOP), which tests/cli/test_work_count.py must catch.
        fma_flops_ = std::getenv("CLPROBE_WORK_TEST_FMA_AS_ONE") ? 1.0 : 2.0;
    }

    bool isThreadSafe() const override { return false; }  // one worker: groups arrive in order

    void kernelBegin(const oclgrind::KernelInvocation* invocation) override {
        active_ = !done_ && (only_kernel_.empty() || invocation->getKernel()->getName() == only_kernel_);
        if (!active_) return;
        const oclgrind::Size3 n = invocation->getNumGroups();
        groups_x_ = n.x;
        groups_xy_ = n.x * n.y;
        run_ = WorkRun{};
        run_.kernel = invocation->getKernel()->getName();
        run_.groups_total = n.x * n.y * n.z;
        const oclgrind::Size3 g = invocation->getGlobalSize();
        run_.work_items_total = g.x * g.y * g.z;
        next_sample_ = 0;
        stride_ = 1;
        started_ = Clock::now();
    }

    void kernelEnd(const oclgrind::KernelInvocation*) override {
        if (!active_) return;
        finish(false);
        active_ = false;
    }

    void workGroupBegin(const oclgrind::WorkGroup* group) override {
        if (!active_) return;
        const oclgrind::Size3 id = group->getGroupID();
        const std::size_t index = id.x + groups_x_ * id.y + groups_xy_ * id.z;
        if (index == next_sample_) {
            counting_ = true;
            group_ = Tally{};
            group_started_ = Clock::now();
            return;
        }
        // Past the budget with a sample in hand: the groups simulated so far stand for the range
        // they covered, and the result says how far that was.
        if (budget_ > 0 && run_.groups_counted > 0 && seconds_since(started_) > budget_ * 1.25) {
            finish(true);
            std::fflush(nullptr);
            ::_exit(0);  // the counting child exists for this one launch; its outputs are not needed
        }
        skip(group);
    }

    void workGroupComplete(const oclgrind::WorkGroup* group) override {
        if (!active_ || !counting_) return;
        counting_ = false;
        const double took = seconds_since(group_started_);
        simulated_seconds_ += took;
        const std::size_t index = next_sample_;
        stride_ = next_stride(index);
        const std::size_t weight = std::min<std::size_t>(stride_, run_.groups_total - index);
        run_.estimate.add(group_, static_cast<double>(weight));
        run_.sampled.add(group_, 1.0);
        run_.group_instructions.push_back(group_.instructions);
        ++run_.groups_counted;
        const oclgrind::Size3 s = group->getGroupSize();
        run_.work_items_counted += s.x * s.y * s.z;
        run_.groups_covered = index + weight;
        next_sample_ = index + stride_;
    }

    void instructionExecuted(const oclgrind::WorkItem*, const llvm::Instruction* instruction,
                             const oclgrind::TypedValue&) override {
        if (!counting_) return;
        auto it = cache_.find(instruction);
        if (it == cache_.end()) it = cache_.emplace(instruction, work_of(instruction, data_)).first;
        const InstructionWork& w = it->second;
        group_.instructions += 1;
        switch (w.op) {
            case OpClass::flop:
                group_.flops[static_cast<int>(w.precision)] += w.lanes;
                break;
            case OpClass::fma:
                group_.flops[static_cast<int>(w.precision)] += fma_flops_ * w.lanes;
                break;
            case OpClass::dot:
                group_.flops[static_cast<int>(w.precision)] += 2.0 * w.lanes;
                break;
            case OpClass::special:
                group_.special[static_cast<int>(w.precision)] += w.lanes;
                break;
            case OpClass::int_op:
                add_int(w, w.lanes);
                break;
            case OpClass::int_mad:
                add_int(w, 2.0 * w.lanes);
                break;
            case OpClass::barrier:
                group_.barriers += 1;
                break;
            case OpClass::none:
                break;
        }
    }

    void memoryLoad(const oclgrind::Memory* m, const oclgrind::WorkItem*, size_t address, size_t size) override {
        access(m, address, size, Direction::load);
    }
    void memoryLoad(const oclgrind::Memory* m, const oclgrind::WorkGroup*, size_t address, size_t size) override {
        access(m, address, size, Direction::load);
    }
    void memoryStore(const oclgrind::Memory* m, const oclgrind::WorkItem*, size_t address, size_t size,
                     const uint8_t*) override {
        access(m, address, size, Direction::store);
    }
    void memoryStore(const oclgrind::Memory* m, const oclgrind::WorkGroup*, size_t address, size_t size,
                     const uint8_t*) override {
        access(m, address, size, Direction::store);
    }
    // An atomic read-modify-write reads and writes its bytes once each, and is one atomic.
    void memoryAtomicLoad(const oclgrind::Memory* m, const oclgrind::WorkItem*, oclgrind::AtomicOp, size_t address,
                          size_t size) override {
        if (!counting_) return;
        group_.atomics += 1;
        access(m, address, size, Direction::load);
    }
    void memoryAtomicStore(const oclgrind::Memory* m, const oclgrind::WorkItem*, oclgrind::AtomicOp, size_t address,
                           size_t size) override {
        access(m, address, size, Direction::store);
    }

  private:
    void add_int(const InstructionWork& w, double n) {
        if (w.address) {
            group_.address_ops += n;
            return;
        }
        group_.int_ops += n;
        if (w.int_bits > 32) group_.int64_ops += n;
    }

    void access(const oclgrind::Memory* m, std::size_t address, std::size_t size, Direction d) {
        if (!counting_) return;
        const unsigned space = m->getAddressSpace();
        if (space >= static_cast<unsigned>(Space::count)) return;
        group_.bytes[space][static_cast<int>(d)] += static_cast<double>(size);
        group_.accesses[space][static_cast<int>(d)] += 1;
        if (space == static_cast<unsigned>(Space::global)) touch(address, size);
    }

    // The 64-byte lines of global memory the simulated groups touched: the launch's footprint,
    // which has to come from the memory level it lives in at least once.
    void touch(std::size_t address, std::size_t size) {
        if (size == 0) return;
        for (std::size_t line = address / line_bytes; line <= (address + size - 1) / line_bytes; ++line)
            lines_.insert(line);
    }

    // Every work-item marked finished before it runs: the group completes at once.
    static void skip(const oclgrind::WorkGroup* group) {
        auto* g = const_cast<oclgrind::WorkGroup*>(group);  // Oclgrind made it non-const; the hook is const
        const oclgrind::Size3 s = g->getGroupSize();
        for (std::size_t z = 0; z < s.z; ++z)
            for (std::size_t y = 0; y < s.y; ++y)
                for (std::size_t x = 0; x < s.x; ++x)
                    if (oclgrind::WorkItem* item = g->getWorkItem(oclgrind::Size3(x, y, z))) g->notifyFinished(item);
    }

    // The smallest stride (never smaller than the last) at which the groups left, simulated at the
    // mean cost so far and skipped at their measured cost, fit in what is left of the budget.
    std::size_t next_stride(std::size_t index) const {
        if (budget_ <= 0) return 1;
        const double elapsed = seconds_since(started_);
        const double per_group = simulated_seconds_ / static_cast<double>(run_.groups_counted + 1);
        const double left_groups = static_cast<double>(run_.groups_total - index - 1);
        const double skipped = static_cast<double>(index + 1 - (run_.groups_counted + 1));
        const double per_skip = skipped > 0 ? std::max(0.0, elapsed - simulated_seconds_) / skipped : 0.0;
        const double left = budget_ - elapsed;
        std::size_t stride = stride_;
        const auto cost = [&](double s) { return left_groups / s * per_group + left_groups * per_skip; };
        while (static_cast<double>(stride) < left_groups && cost(static_cast<double>(stride)) > left)
            stride *= 2;
        return stride;
    }

    void finish(bool cut) {
        if (done_) return;
        done_ = true;
        run_.cut_by_budget = cut || run_.groups_covered < run_.groups_total;
        run_.exact = !run_.cut_by_budget && run_.groups_counted == run_.groups_total;
        run_.seconds = seconds_since(started_);
        run_.footprint_sampled = static_cast<double>(lines_.size()) * line_bytes;
        if (run_.groups_covered > 0 && run_.groups_covered < run_.groups_total)
            run_.estimate.scale(static_cast<double>(run_.groups_total) / static_cast<double>(run_.groups_covered));
        if (!out_.empty()) write_work_run(run_, out_);
    }

    std::string out_, only_kernel_;
    double budget_ = 0, fma_flops_ = 2;
    bool active_ = false, counting_ = false, done_ = false;
    WorkRun run_;
    Tally group_;
    std::size_t groups_x_ = 1, groups_xy_ = 1, next_sample_ = 0, stride_ = 1;
    double simulated_seconds_ = 0;
    Clock::time_point started_, group_started_;
    std::unordered_map<const llvm::Instruction*, InstructionWork> cache_;
    DataValues data_;
    static constexpr std::size_t line_bytes = 64;
    std::unordered_set<std::size_t> lines_;
};

// One plugin per Oclgrind context (each cl_context the program creates has its own).
std::unordered_map<oclgrind::Context*, WorkCounter*>& plugins() {
    static std::unordered_map<oclgrind::Context*, WorkCounter*> by_context;
    return by_context;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void initializePlugins(oclgrind::Context* context) {
    auto* plugin = new WorkCounter(context);
    plugins()[context] = plugin;
    context->registerPlugin(plugin);
}

extern "C" __attribute__((visibility("default"))) void releasePlugins(oclgrind::Context* context) {
    const auto it = plugins().find(context);
    if (it == plugins().end()) return;
    context->unregisterPlugin(it->second);
    delete it->second;
    plugins().erase(it);
}
