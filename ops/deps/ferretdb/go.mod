module cybercom-ts/ferretdb-build

go 1.24

require github.com/FerretDB/FerretDB/v2 v2.7.0
