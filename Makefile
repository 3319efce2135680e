# A thin wrapper over CMake for the README's commands. BUILD and CMAKE_FLAGS may be
# overridden, e.g. `make test CMAKE_FLAGS=-DPP_ENABLE_CUDA=OFF`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# The CUDA toolkit often sits outside PATH; point CMake at it when it does.
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifneq ($(NVCC),)
CUDA_FLAG := -DCMAKE_CUDA_COMPILER=$(NVCC)
endif

.PHONY: all configure run test test-large bench install clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

configure:
	@command -v cmake >/dev/null || { echo "parprim needs cmake (apt-get install -y cmake)"; exit 1; }
	cmake -S . -B $(BUILD) $(CUDA_FLAG) $(CMAKE_FLAGS)

run: all
	./$(BUILD)/parprim demo

test: all
	cd $(BUILD) && ctest --output-on-failure -LE large -j $(JOBS)

test-large: all
	cd $(BUILD) && ctest --output-on-failure -L large

bench: all
	./$(BUILD)/parprim bench

install: all
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
