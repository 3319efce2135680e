# dist_link.cmake — link the engines found by cmake/dist.cmake (PP_DIST_LIBS) into the
# targets built from parprim_objects: the shared library keeps them private, the static
# library passes them on to whoever links it, and the parprim command links them when it
# takes the objects itself. Include it once the library targets exist; including it again
# later (cmake/dist_tests.cmake does, after the command is defined) links only the targets
# not linked yet.
if(PP_DIST_LIBS)
  foreach(pp_t parprim parprim_static parprim_cli)
    if(TARGET ${pp_t})
      get_property(pp_done TARGET ${pp_t} PROPERTY PP_DIST_LINKED)
      if(NOT pp_done)
        if(pp_t STREQUAL "parprim_static")
          target_link_libraries(${pp_t} PUBLIC ${PP_DIST_LIBS})
        else()
          target_link_libraries(${pp_t} PRIVATE ${PP_DIST_LIBS})
        endif()
        if(pp_t STREQUAL "parprim_cli" AND PP_HAVE_NCCL)
          # the bench's CUB + NCCL sort peer (bench/peer_dist_sort.cu) calls NCCL itself
          target_compile_definitions(parprim_cli PRIVATE PP_HAVE_NCCL=1)
          target_include_directories(parprim_cli SYSTEM PRIVATE ${PP_NCCL_INCLUDE_DIR})
        endif()
        set_property(TARGET ${pp_t} PROPERTY PP_DIST_LINKED ON)
      endif()
    endif()
  endforeach()
endif()
