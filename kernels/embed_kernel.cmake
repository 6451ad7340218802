# cmake -DINPUT=file.cl -DOUTPUT=file.cpp -DSYMBOL=name -P embed_kernel.cmake
# Writes the kernel source as a byte array (not a raw string: no delimiter can clash with the
# source, and no compiler limit on string literal length applies).
if(NOT INPUT OR NOT OUTPUT OR NOT SYMBOL)
  message(FATAL_ERROR "embed_kernel.cmake needs INPUT, OUTPUT and SYMBOL")
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Break the array into lines of 16 bytes so compiler diagnostics stay readable.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by kernels/embed_kernel.cmake; do not edit.\n"
  "namespace clprobe::embedded {\n"
  "static const unsigned char bytes[] = {\n    ${bytes}0x00};\n"
  "extern const char* const ${SYMBOL};\n"
  "const char* const ${SYMBOL} = reinterpret_cast<const char*>(bytes);\n"
  "}  // namespace clprobe::embedded\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
