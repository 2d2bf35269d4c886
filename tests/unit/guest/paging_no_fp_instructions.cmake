# ctest (cmake -P): fails if the guest's page-table code (the objects of
# kvmgpu_guest_paging) contains an instruction that KVM's x86 instruction
# emulator cannot run: SSE/AVX/MMX/x87 (any %xmm %ymm %zmm %mm %st operand or
# x87 mnemonic), the SSE fences and MXCSR/MMX state instructions, rdtscp.
# Guests run in ring 3 natively, but KVM traps their writes to live
# page-table pages and emulates them; that code is compiled with
# -mgeneral-regs-only, and this checks what the compiler made of it.
# Arguments: -DOBJECTS=<obj|obj|...> -DOBJDUMP=<objdump>
string(REPLACE "|" ";" images "${OBJECTS}")
if(NOT images)
  message(FATAL_ERROR "no objects given: build kvmgpu_guest_paging first")
endif()

# Disassembly lines are "addr:<TAB>mnemonic operands"; x87 mnemonics all
# start with f (the "fs" segment prefix excluded).
set(bad_operand "%(xmm|ymm|zmm|mm|st)")
set(bad_mnemonic "\t(f[a-rt-z0-9]|fs[a-z0-9]|lfence|mfence|sfence|ldmxcsr|stmxcsr|emms|rdtscp)")

set(failed "")
foreach(image IN LISTS images)
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${image}"
                  OUTPUT_VARIABLE dis RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} -d ${image} failed (${rc}): ${err}")
  endif()
  if(NOT dis MATCHES "${bad_operand}" AND NOT dis MATCHES "${bad_mnemonic}")
    message(STATUS "ok: ${image}")
    continue()
  endif()
  # Report the offending lines with the function each one is in.
  string(REPLACE ";" "," dis "${dis}")
  string(REPLACE "\n" ";" lines "${dis}")
  set(function "?")
  set(count 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-f]+ <(.*)>:$")
      set(function "${CMAKE_MATCH_1}")
    elseif(line MATCHES "${bad_operand}" OR line MATCHES "${bad_mnemonic}")
      math(EXPR count "${count} + 1")
      if(count LESS_EQUAL 20)
        message("  ${function}: ${line}")
      endif()
    endif()
  endforeach()
  message("${image}: ${count} SSE/x87 (or other non-emulatable) instructions")
  list(APPEND failed "${image}")
endforeach()
if(failed)
  message(FATAL_ERROR "page-table objects with SSE/x87 instructions: ${failed}")
endif()
