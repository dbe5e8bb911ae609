# cmake -DINPUT=<template> -DOUTPUT=<header> -DSYMBOL=<name> -DSOURCE=<path for the comment> -P embed.cmake
# Writes a header holding the template's bytes as gp::shaders::<name>, a std::string_view. A raw
# string literal keeps the generated header as readable as the template and every byte as it is.
file(READ "${INPUT}" text)
set(delimiter "gp_shader")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${SOURCE} contains ')${delimiter}\"', the end of the raw string that embeds it")
endif()
string(CONCAT header
       "// Generated from ${SOURCE} by shaders/embed.cmake: edit the template, not this file.\n"
       "#pragma once\n\n#include <string_view>\n\nnamespace gp::shaders {\n\n"
       "inline constexpr std::string_view ${SYMBOL} = R\"${delimiter}(" "${text}" ")${delimiter}\";\n\n"
       "}  // namespace gp::shaders\n")
file(WRITE "${OUTPUT}" "${header}")
