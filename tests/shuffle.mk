# tests of shuffle/
