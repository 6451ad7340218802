# Writes the clprobe(1) man page (run with cmake -P from the clprobe_man target).
# help2man reads only `clprobe --help` and `--version`; each subcommand's own --help is added as a
# COMMANDS section through a generated include file, so every option on the page comes from the
# binary itself and cannot drift from it. The subcommands are the ones `clprobe --help` lists.
# Inputs: CLPROBE (the built binary), VERSION, HELP2MAN, INCLUDE (src/cli/clprobe.h2m), OUTPUT, WORK_DIR.
foreach(var CLPROBE VERSION HELP2MAN INCLUDE OUTPUT WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man_page.cmake: ${var} is not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR})

function(help_of out)
  execute_process(COMMAND ${CLPROBE} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man_page.cmake: '${CLPROBE} ${ARGN} --help' exited with ${rc}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# CLI11 lists subcommands under "Subcommands:", one per line, indented by two spaces.
help_of(top)
string(FIND "${top}" "\nSubcommands:\n" at)
if(at LESS 0)
  message(FATAL_ERROR "man_page.cmake: no 'Subcommands:' section in '${CLPROBE} --help'")
endif()
string(SUBSTRING "${top}" ${at} -1 listing)
string(REGEX MATCHALL "\n  [a-z][a-z-]*" names "${listing}")

set(section "[COMMANDS]\n")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  help_of(text ${name})
  # Verbatim in roff: a backslash is \e, and a line opening with . or ' (a request), [ or /
  # (help2man's section markers) is protected by \&.
  string(REPLACE "\\" "\\e" text "${text}")
  set(text "\n${text}")
  string(REGEX REPLACE "\n([.'[/])" "\n\\\\&\\1" text "${text}")
  string(APPEND section ".SS \"clprobe ${name}\"\n.nf${text}\n.fi\n")
endforeach()
file(WRITE ${WORK_DIR}/commands.h2m "${section}")

execute_process(
  COMMAND ${HELP2MAN} --no-info --section=1 "--source=clprobe ${VERSION}" --manual="User Commands" --include=${INCLUDE}
          --include=${WORK_DIR}/commands.h2m --output=${OUTPUT}.tmp ${CLPROBE}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page.cmake: help2man exited with ${rc}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
