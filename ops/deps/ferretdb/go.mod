module cybercom-ts/ferretdb-build

go 1.24

require github.com/FerretDB/FerretDB v1.24.2
