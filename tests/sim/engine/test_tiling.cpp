// Tile arithmetic against hand-computed offsets (each with its arithmetic).
#include <catch2/catch_test_macros.hpp>

#include "tiling.hpp"

using namespace vgen9::tiling;

TEST_CASE("X tile offsets (512 B x 8 rows, row-major tiles)", "[tiling]") {
    // pitch 2048 B -> 2048/512 = 4 tiles per tile row
    CHECK(x_tile_offset(0, 0, 2048) == 0);
    // tile 0, row 7 -> 7*512 = 3584, + byte 511 -> 4095 (last byte of tile 0)
    CHECK(x_tile_offset(511, 7, 2048) == 4095);
    // xB 512 -> tile column 1 -> 1*4096 = 4096
    CHECK(x_tile_offset(512, 0, 2048) == 4096);
    // y 13: tile row 1 (13/8), row-in-tile 5; xB 1000: tile column 1 (1000/512), byte 488
    // (1*4 + 1)*4096 = 20480; 5*512 = 2560; 488 -> 20480 + 2560 + 488 = 23528
    CHECK(x_tile_offset(1000, 13, 2048) == 23528);
    // y 8: tile row 1, row 0; xB 2047: tile column 3, byte 511
    // (1*4 + 3)*4096 = 28672; + 0 + 511 = 29183
    CHECK(x_tile_offset(2047, 8, 2048) == 29183);
    // pitch 512 (1 tile per row), y 17: tile row 2, row 1; xB 3
    // 2*4096 = 8192; 1*512 = 512; 3 -> 8707
    CHECK(x_tile_offset(3, 17, 512) == 8707);
}

TEST_CASE("Y tile offsets (128 B x 32 rows of 16 B OWord columns)", "[tiling]") {
    // pitch 512 B -> 512/128 = 4 tiles per tile row
    CHECK(y_tile_offset(0, 0, 512) == 0);
    // bytes 0..15 of row 0 are contiguous: xB 15 -> 15
    CHECK(y_tile_offset(15, 0, 512) == 15);
    // xB 16 starts OWord column 1: 1*(32 rows * 16 B) = 512
    CHECK(y_tile_offset(16, 0, 512) == 512);
    // row 1 of column 0 follows row 0: 1*16 = 16
    CHECK(y_tile_offset(0, 1, 512) == 16);
    // xB 127, y 31: column 127/16 = 7 -> 7*512 = 3584; row 31 -> 31*16 = 496; byte 15
    // 3584 + 496 + 15 = 4095 (last byte of tile 0)
    CHECK(y_tile_offset(127, 31, 512) == 4095);
    // xB 128 -> tile column 1 -> 4096
    CHECK(y_tile_offset(128, 0, 512) == 4096);
    // xB 300, y 40: tile row 40/32 = 1, tile column 300/128 = 2 -> (1*4 + 2)*4096 = 24576
    // 300%128 = 44 -> OWord column 44/16 = 2 -> 1024; row 40%32 = 8 -> 128; byte 44%16 = 12
    // 24576 + 1024 + 128 + 12 = 25740
    CHECK(y_tile_offset(300, 40, 512) == 25740);
    // pitch 128 (1 tile per row): xB 33, y 70 -> tile row 2 -> 8192; column 2 -> 1024;
    // row 70%32 = 6 -> 96; byte 1 -> 8192 + 1024 + 96 + 1 = 9313
    CHECK(y_tile_offset(33, 70, 128) == 9313);
}

TEST_CASE("contiguous runs", "[tiling]") {
    CHECK(contiguous_run(Tiling::X, 500) == 12);   // 512 - 500
    CHECK(contiguous_run(Tiling::X, 512) == 512);  // start of the next tile row segment
    CHECK(contiguous_run(Tiling::Y, 20) == 12);    // 16 - 20%16
    CHECK(contiguous_run(Tiling::Y, 32) == 16);
    CHECK(contiguous_run(Tiling::Linear, 7) == 0);  // unbounded
    CHECK(tile_width(Tiling::X) == 512);
    CHECK(tile_width(Tiling::Y) == 128);
    CHECK(tile_height(Tiling::X) == 8);
    CHECK(tile_height(Tiling::Y) == 32);
}
