# The parts of the tree, in order from the ground up, and what each may include: the one place that says
# so. A part is the source files directly in its folder (folder/** : and in every folder below it);
# USES lists every part its files include, each declared on an earlier line, so the parts form a strict
# order; ANY (the tests and the fuzz targets) may include every part. LIBRARY names the CMake target the
# part is compiled into (the core is one library: the board's builds compile common/src as one Arduino
# library or ESP-IDF component).
#
# tests/layering_test.cpp reads this file and every #include of the tree: an include of a part not in
# USES, a USES the files never include, a file in no part or an include loop between files fails it,
# naming the file and line. host/CMakeLists.txt builds each host part as its own library that links
# exactly the libraries of its USES (tv_part_links); the tools link theirs the same way.
# docs/architecture.md draws the order and says where a new piece goes.

#       part           folder                          built into         may include
# ---- the core (common/src): freestanding, device-safe ----
tv_part(core_base      common/src/tv                   LIBRARY tvcore)
tv_part(core_image     common/src/tv/image             LIBRARY tvcore     USES core_base)
tv_part(core_link      common/src/tv/link              LIBRARY tvcore     USES core_base)
tv_part(core_detect    common/src/tv/detect            LIBRARY tvcore     USES core_base)
tv_part(core_ops       common/src/tv/ops               LIBRARY tvcore     USES core_base)
tv_part(core_ops_fast  common/src/tv/ops/fast          LIBRARY tvcore     USES core_ops)
tv_part(core_model     common/src/tv/model             LIBRARY tvcore     USES core_base core_detect core_image core_ops)
tv_part(core_int8      common/src/tv/int8              LIBRARY tvcore     USES core_base core_model core_ops)
tv_part(core_layers    common/src/tv/layers            LIBRARY tvcore     USES core_int8 core_model core_ops)
tv_part(core_train     common/src/tv/train             LIBRARY tvcore     USES core_base core_detect core_model core_ops)
tv_part(core_backbones common/src/tv/backbones        LIBRARY tvcore)
tv_part(core_formats   common/src/tv/formats           LIBRARY tvcore     USES core_base core_int8 core_model core_train)
tv_part(core_library   common/src                      LIBRARY tvcore
        USES core_base core_formats core_image core_int8 core_model core_train)
# ---- host/: what only a computer does ----
tv_part(host_base      host/base                       LIBRARY tvhost_base    USES core_base)
tv_part(host_model     host/model                      LIBRARY tvhost_model
        USES host_base core_base core_formats core_int8 core_model core_train)
tv_part(host_photos    host/photos                     LIBRARY tvhost_photos
        USES host_base core_base core_detect core_image core_train)
tv_part(host_espdl     host/espdl                      LIBRARY tvhost_espdl   USES host_base host_model core_int8)
tv_part(host_layers    host/layers                     LIBRARY tvhost_layers  USES host_base host_espdl core_model)
tv_part(host_train     host/train                      LIBRARY tvhost_train
        USES host_base host_model host_photos host_layers core_base core_detect core_formats core_int8 core_model
             core_train)
tv_part(host_quant     host/quant                      LIBRARY tvhost_quant
        USES host_base host_model host_photos host_layers core_detect core_int8 core_model core_train)
tv_part(host_export    host/export                     LIBRARY tvhost_export
        USES host_base host_model host_espdl host_layers host_quant host_train
             core_base core_formats core_int8 core_model core_train)
tv_part(host_report    host/report                     LIBRARY tvhost_report
        USES host_base host_model host_photos host_train host_quant host_export core_int8 core_model)
tv_part(host_link      host/link                       LIBRARY tvhost_link    USES host_base host_photos core_base core_link)
# ---- firmware/: the board's application, its two hardware layers, the sketches, the simulator ----
tv_part(fw_app         firmware/app                    LIBRARY tvfw_app
        USES core_backbones core_base core_detect core_formats core_image core_int8 core_link core_model core_train)
tv_part(fw_hal_sim     firmware/hal_sim                LIBRARY tvfw_hal_sim   USES fw_app host_base host_photos host_train)
tv_part(fw_hal_esp32   firmware/hal_esp32                                 USES fw_app)
tv_part(fw_sketches    firmware/esp32/** firmware/examples/**             USES fw_app fw_hal_esp32)
tv_part(fw_sim         firmware                                           USES fw_app fw_hal_sim host_base)
# ---- tools/: the command lines ----
tv_part(tools_common   tools/common                                       USES host_base core_train)
tv_part(tvtrain        tools/tvtrain
        USES tools_common host_base host_model host_photos host_train host_report core_backbones core_detect
             core_formats core_int8 core_train)
tv_part(tvquant        tools/tvquant
        USES tools_common host_base host_model host_photos host_train host_quant host_report core_int8 core_train)
tv_part(tvexport       tools/tvexport
        USES tools_common host_base host_model host_photos host_espdl host_export host_train)
tv_part(tvlink         tools/tvlink                                       USES tools_common host_base host_model host_link core_base)
# ---- data the project makes, figures, tests ----
tv_part(datasets       datasets/**                                        USES tools_common host_base host_photos core_base)
tv_part(bench          bench/**
        USES host_base host_link host_model host_photos host_train core_base core_detect core_link core_model core_ops
             core_train)
tv_part(tests          tests/**                                           ANY)
tv_part(fuzz           fuzz/**                                            ANY)
